-- Summaries of screens, third layout (issue 21): writers append deltas, a background fold
-- moves them into the summaries. The triggers used to upsert the summary rows themselves, in
-- the writer's transaction: two writers of one job (and slot) queued on one row, and two
-- transactions that touched two jobs in opposite orders deadlocked where the screens alone
-- had no row in common. Now a statement that writes screens appends its net change per (job,
-- completion bucket) to screen_summary_deltas and locks nothing a writer could wait for; a
-- reader adds a job's unfolded deltas to its summary rows, so every answer stays exact at
-- every instant; fold_screen_summary_deltas() moves deltas into the summaries in the
-- background (the API calls it every SUMMARY_FOLD_INTERVAL_MS). The design and what was
-- measured: docs/summaries-design.md.
--
-- This file holds the current definition of every function of the summaries; the earlier
-- migrations' versions are replaced or dropped here.

-- No writer may change screens while the triggers are swapped: a write between the old
-- triggers' removal and the new ones' creation would be missing from the summaries. The
-- strongest lock first, as DROP TRIGGER and ADD CONSTRAINT need it: taken in steps, a writer
-- holding the weaker one could deadlock with it. Held for the instant the statements below
-- take (no scan of screens but the count just below, no rebuild): get job and the list do not
-- read screens, analytics waits that instant. (The migration runner sets a lock_timeout and
-- retries, so a long transaction on screens delays this migration, never the API.)
LOCK TABLE screens IN ACCESS EXCLUSIVE MODE;

-- Completion times the summaries can place. `infinity` cannot be placed in any week (and
-- made the summaries' arithmetic fail); the API reads weeks from 1900 to 2999. A screen
-- already outside this range stops the migration, before it changes anything, with the count
-- and the query to find them: no automatic choice keeps their meaning, so a person decides
-- (fix the time, or delete the screen).
DO $$
DECLARE outside bigint;
BEGIN
  SELECT count(*) INTO outside FROM screens
  WHERE completed_at IS NOT NULL AND NOT (completed_at >= timestamptz '1900-01-01 00:00+00' AND completed_at < timestamptz '3000-01-01 00:00+00');
  IF outside > 0 THEN
    RAISE EXCEPTION '% screen(s) have a completion time the summaries cannot place (infinite, before 1900 or from 3000 on)', outside
      USING HINT = 'Find them with: SELECT id, job_id, completed_at FROM screens WHERE NOT (completed_at >= ''1900-01-01Z'' AND completed_at < ''3000-01-01Z''). Correct or delete them with the summaries'' triggers off (the earlier triggers cannot place them either: ALTER TABLE screens DISABLE TRIGGER USER, then ENABLE; this migration rebuilds the summaries), mark this migration rolled back, and run the migrations again (docs/operations.md).';
  END IF;
END
$$;
-- NOT VALID: checked for new rows at once; the existing ones were counted above, and the next
-- migration validates them without blocking anyone.
ALTER TABLE screens ADD CONSTRAINT screens_completed_at_placeable
  CHECK (completed_at >= timestamptz '1900-01-01 00:00+00' AND completed_at < timestamptz '3000-01-01 00:00+00') NOT VALID;

-- A job's id never changes: its summary rows would follow through the foreign keys' cascade
-- while its screens' cascaded update added every screen again (the figures doubled), and
-- partners keep jobs by id. Refused, with the reason.
CREATE FUNCTION jobs_refuse_id_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the id of job % cannot change', OLD.id
    USING ERRCODE = 'restrict_violation', HINT = 'A job''s id is how its summaries and API clients know it: create a new job and move the screens instead.';
END
$$;
CREATE TRIGGER jobs_id_never_changes
  BEFORE UPDATE OF id ON jobs
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id)
  EXECUTE FUNCTION jobs_refuse_id_change();

-- Where a completion at `t` is summarised. A local week starts on Monday 00:00 local time;
-- for every UTC offset from -12:00 to +14:00 that instant lies in the boundary window from
-- Sunday 10:00 to Monday 12:00 UTC. The rest of the UTC week, the segment from Monday 12:00
-- to Sunday 10:00, lies inside one local week in every zone. In a window, the completion
-- counts in its quarter hour (0 to 103): every zone's offset since the 1970s is a multiple
-- of 15 minutes, so no quarter hour straddles a local week boundary. Before 1980, when some
-- offsets were not, a completion is its own segment. 2000-01-02 is a Sunday. (Unchanged.)
CREATE OR REPLACE FUNCTION completion_place(t timestamptz, OUT segment timestamptz, OUT window_start timestamptz, OUT quarter int)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  w timestamptz := date_bin('7 days', t, timestamptz '2000-01-02 10:00+00'); -- the Sunday 10:00 at or before t
BEGIN
  IF t < timestamptz '1980-01-01 00:00+00' THEN
    segment := t;
  ELSIF t - w >= interval '26 hours' THEN
    segment := w + interval '26 hours';
  ELSE
    window_start := w;
    quarter := floor(extract(epoch FROM t - w) / 900)::int;
  END IF;
END
$$;

-- The same place as one instant, the bucket of a delta: the segment's start, or the quarter
-- hour's (window_start + quarter × 15 min), or `t` itself before 1980. Every instant of a
-- bucket is in one local week in every zone, so a reader bins a delta by its bucket. SQL, so
-- that it is inlined into the statements that use it.
CREATE FUNCTION completion_bucket(t timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE
    WHEN t < timestamptz '1980-01-01 00:00+00' THEN t
    WHEN t - date_bin('7 days', t, timestamptz '2000-01-02 10:00+00') >= interval '26 hours'
      THEN date_bin('7 days', t, timestamptz '2000-01-02 10:00+00') + interval '26 hours'
    ELSE date_bin('15 minutes', t, timestamptz '2000-01-02 10:00+00')
  END
$$;

-- A version of the summaries: never below the clock (in microseconds), so that a version
-- given out before the database was restored from an older backup does not come back with
-- other figures. (Unchanged.)
CREATE OR REPLACE FUNCTION summaries_clock() RETURNS bigint
LANGUAGE sql VOLATILE AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint $$;

-- The writers' side: one statement's net change, per job and bucket, appended. Scores are
-- summed exactly as the doubles they are: `score::text` is the shortest decimal that reads
-- back as the same double (with extra_float_digits above 0, set here whatever the writer's
-- session says), where `score::numeric` keeps 15 significant digits (33.333333333333336
-- became 33.3333333333333). A change that nets to nothing (an update of other columns)
-- appends nothing. The deletes of a deleted job's screens, which its cascade runs, append
-- nothing either: its summaries went with it, and its unfolded deltas are dropped by the fold.
CREATE FUNCTION screens_append_summary_deltas() RETURNS trigger
LANGUAGE plpgsql SET extra_float_digits = 3 AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
    SELECT s.job_id, CASE WHEN s.status = 'completed' THEN completion_bucket(s.completed_at) END,
           count(*) FILTER (WHERE s.status = 'in_progress'), count(*) FILTER (WHERE s.status = 'completed'),
           count(*) FILTER (WHERE s.status = 'expired'), count(s.score) FILTER (WHERE s.status = 'completed'),
           coalesce(sum(s.score::text::numeric) FILTER (WHERE s.status = 'completed'), 0), summaries_clock()
    FROM new_screens s
    GROUP BY 1, 2;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
    SELECT s.job_id, CASE WHEN s.status = 'completed' THEN completion_bucket(s.completed_at) END,
           -count(*) FILTER (WHERE s.status = 'in_progress'), -count(*) FILTER (WHERE s.status = 'completed'),
           -count(*) FILTER (WHERE s.status = 'expired'), -count(s.score) FILTER (WHERE s.status = 'completed'),
           -coalesce(sum(s.score::text::numeric) FILTER (WHERE s.status = 'completed'), 0), summaries_clock()
    FROM old_screens s
    WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.id = s.job_id)
    GROUP BY 1, 2;
  ELSE
    INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
    SELECT job_id, bucket, sum(in_progress), sum(completed), sum(expired), sum(scored), sum(score_sum), summaries_clock()
    FROM (
      SELECT s.job_id, CASE WHEN s.status = 'completed' THEN completion_bucket(s.completed_at) END AS bucket,
             -(s.status = 'in_progress')::int AS in_progress, -(s.status = 'completed')::int AS completed,
             -(s.status = 'expired')::int AS expired, -(s.status = 'completed' AND s.score IS NOT NULL)::int AS scored,
             CASE WHEN s.status = 'completed' THEN -coalesce(s.score::text::numeric, 0) ELSE 0 END AS score_sum
      FROM old_screens s
      UNION ALL
      SELECT s.job_id, CASE WHEN s.status = 'completed' THEN completion_bucket(s.completed_at) END,
             (s.status = 'in_progress')::int, (s.status = 'completed')::int,
             (s.status = 'expired')::int, (s.status = 'completed' AND s.score IS NOT NULL)::int,
             CASE WHEN s.status = 'completed' THEN coalesce(s.score::text::numeric, 0) ELSE 0 END
      FROM new_screens s
    ) change
    GROUP BY job_id, bucket
    HAVING sum(in_progress) <> 0 OR sum(completed) <> 0 OR sum(expired) <> 0 OR sum(scored) <> 0 OR sum(score_sum) <> 0;
  END IF;
  RETURN NULL;
END
$$;

-- TRUNCATE fires no row or transition trigger: the summaries are emptied with it, versions on
-- (a version never comes back with other figures).
CREATE OR REPLACE FUNCTION screens_maintain_summaries() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- No fold in between: one could add rows this would not see.
  PERFORM pg_advisory_xact_lock(8146720561340517);
  -- Every job's unfolded deltas counted in its slot 0 first (a job may have no row yet), so
  -- that its count of changes never goes back; then one more change for each row.
  INSERT INTO job_screen_stats AS t (job_id, slot, version, changes, changes_hash)
  SELECT d.job_id, 0, max(d.changed_at), count(*), bit_xor(hashint8extended(d.id, 0)) FROM screen_summary_deltas d
  WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.id = d.job_id)
  GROUP BY d.job_id
  ON CONFLICT (job_id, slot) DO UPDATE SET changes = t.changes + excluded.changes, version = greatest(t.version, excluded.version),
    changes_hash = t.changes_hash # excluded.changes_hash;
  UPDATE job_screen_stats t SET in_progress = 0, completed = 0, expired = 0, scored = 0, score_sum = 0,
    changes = t.changes + 1, version = greatest(version + 1, summaries_clock()),
    changes_hash = t.changes_hash # hashint8extended(summaries_clock(), 1);
  DELETE FROM job_completion_segments;
  DELETE FROM job_completion_boundaries;
  DELETE FROM screen_summary_deltas;
  RETURN NULL;
END
$$;

DROP TRIGGER screens_summaries_insert_delete ON screens;
DROP TRIGGER screens_summaries_update ON screens;
-- Statement triggers with transition tables: one append per statement, whatever its number
-- of rows (a bulk load of a million screens appends one row per job and bucket).
CREATE TRIGGER screens_summary_deltas_insert
  AFTER INSERT ON screens REFERENCING NEW TABLE AS new_screens
  FOR EACH STATEMENT EXECUTE FUNCTION screens_append_summary_deltas();
CREATE TRIGGER screens_summary_deltas_update
  AFTER UPDATE ON screens REFERENCING OLD TABLE AS old_screens NEW TABLE AS new_screens
  FOR EACH STATEMENT EXECUTE FUNCTION screens_append_summary_deltas();
CREATE TRIGGER screens_summary_deltas_delete
  AFTER DELETE ON screens REFERENCING OLD TABLE AS old_screens
  FOR EACH STATEMENT EXECUTE FUNCTION screens_append_summary_deltas();
-- screens_summaries_truncate stays, now with the function above.

DROP FUNCTION screen_summaries_add(screens, int);
DROP FUNCTION screen_summaries_change(screens, screens);
DROP FUNCTION screen_stats_add(uuid, int, int, int, int, numeric);
DROP FUNCTION screen_completion_add(uuid, timestamptz, int, int, numeric);

-- The fold: moves the deltas of up to `max_deltas` rows (oldest first) into the summaries, in
-- slot 0, and returns how many it moved. One fold at a time (an advisory lock; a second
-- caller returns 0 at once). It never waits for a writer of screens: it locks the jobs it
-- folds FOR KEY SHARE, which a screen's insert also takes, and skips a job that is being
-- deleted (locked FOR UPDATE) until the next fold; a deleted job's leftover deltas are
-- dropped. Readers see the deltas before and the summaries after, in one commit: their sum,
-- so every answer, is the same, and so is the job's version (the analytics ETag): slot 0
-- counts the deltas folded into it and keeps the latest of their times. SECURITY DEFINER:
-- the API's role, which may not write the summaries, runs it.
CREATE FUNCTION fold_screen_summary_deltas(max_deltas int DEFAULT 20000) RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  locked uuid[];
  moved int;
BEGIN
  IF NOT pg_try_advisory_xact_lock(8146720561340517) THEN RETURN 0; END IF;
  max_deltas := least(greatest(max_deltas, 1), 100000);
  -- Deltas of deleted jobs (their summaries went with them).
  DELETE FROM screen_summary_deltas d WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = d.job_id);
  -- Jobs with deltas that no one is deleting (a deletion holds the job FOR UPDATE): skipped
  -- until the next fold, without holding up the others'.
  SELECT array_agg(id) INTO locked
  FROM (SELECT j.id FROM jobs j WHERE j.id IN (SELECT job_id FROM screen_summary_deltas)
        ORDER BY j.id LIMIT 1000 FOR KEY SHARE OF j SKIP LOCKED) j;
  IF locked IS NULL THEN RETURN 0; END IF;

  WITH moved AS (
    DELETE FROM screen_summary_deltas
    WHERE (job_id, id) IN (SELECT job_id, id FROM screen_summary_deltas WHERE job_id = ANY (locked) ORDER BY id LIMIT max_deltas)
    RETURNING id, job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at
  ), stats AS (
    INSERT INTO job_screen_stats AS t (job_id, slot, in_progress, completed, expired, scored, score_sum, version, changes, changes_hash)
    SELECT job_id, 0, sum(in_progress), sum(completed), sum(expired), sum(scored), sum(score_sum), max(changed_at), count(*),
           bit_xor(hashint8extended(id, 0))
    FROM moved GROUP BY job_id
    ON CONFLICT (job_id, slot) DO UPDATE SET
      in_progress = t.in_progress + excluded.in_progress, completed = t.completed + excluded.completed,
      expired = t.expired + excluded.expired, scored = t.scored + excluded.scored, score_sum = t.score_sum + excluded.score_sum,
      version = greatest(t.version, excluded.version), changes = t.changes + excluded.changes,
      changes_hash = t.changes_hash # excluded.changes_hash
  ), places AS (
    SELECT m.job_id, p.segment, p.window_start, p.quarter,
           sum(m.completed) AS completed, sum(m.scored) AS scored, sum(m.score_sum) AS score_sum
    FROM moved m CROSS JOIN LATERAL completion_place(m.bucket) p
    WHERE m.bucket IS NOT NULL
    GROUP BY 1, 2, 3, 4
  ), segments AS (
    INSERT INTO job_completion_segments AS s (job_id, segment, slot, completed, scored, score_sum)
    SELECT job_id, segment, 0, completed, scored, score_sum FROM places WHERE segment IS NOT NULL
    ON CONFLICT (job_id, segment, slot) DO UPDATE SET
      completed = s.completed + excluded.completed, scored = s.scored + excluded.scored, score_sum = s.score_sum + excluded.score_sum
  ), quarters AS (
    -- Slot 0's row of each window touched, taken apart into its quarter hours, plus the
    -- deltas' quarter hours: summed, then made running totals again.
    SELECT job_id, window_start, quarter, sum(completed) AS completed, sum(scored) AS scored, sum(score_sum) AS score_sum
    FROM (
      SELECT job_id, window_start, quarter, completed, scored, score_sum FROM places WHERE window_start IS NOT NULL
      UNION ALL
      SELECT b.job_id, b.window_start, u.quarter,
             u.completed - lag(u.completed, 1, 0) OVER w, u.scored - lag(u.scored, 1, 0) OVER w,
             u.score_sum - lag(u.score_sum, 1, 0::numeric) OVER w
      FROM job_completion_boundaries b
      CROSS JOIN LATERAL unnest(b.quarters, b.completed_through, b.scored_through, b.score_sum_through) WITH ORDINALITY u(quarter, completed, scored, score_sum, i)
      WHERE b.slot = 0 AND (b.job_id, b.window_start) IN (SELECT job_id, window_start FROM places WHERE window_start IS NOT NULL)
      WINDOW w AS (PARTITION BY b.job_id, b.window_start ORDER BY u.i)
    ) q
    GROUP BY 1, 2, 3
  ), windows AS (
    INSERT INTO job_completion_boundaries AS b (job_id, window_start, slot, quarters, completed_through, scored_through, score_sum_through)
    SELECT job_id, window_start, 0, array_agg(quarter ORDER BY quarter), array_agg(completed ORDER BY quarter),
           array_agg(scored ORDER BY quarter), array_agg(score_sum ORDER BY quarter)
    FROM (
      SELECT job_id, window_start, quarter, (sum(completed) OVER r)::int AS completed, (sum(scored) OVER r)::int AS scored,
             sum(score_sum) OVER r AS score_sum
      FROM quarters
      WINDOW r AS (PARTITION BY job_id, window_start ORDER BY quarter)
    ) running
    GROUP BY job_id, window_start
    ON CONFLICT (job_id, window_start, slot) DO UPDATE SET
      quarters = excluded.quarters, completed_through = excluded.completed_through,
      scored_through = excluded.scored_through, score_sum_through = excluded.score_sum_through
  )
  SELECT count(*)::int INTO moved FROM moved;
  RETURN moved;
END
$$;

-- Only the roles that read the summaries may fold (the API's; the owner always can): any
-- caller could otherwise hold the fold's lock.
REVOKE EXECUTE ON FUNCTION fold_screen_summary_deltas(int) FROM PUBLIC;
DO $$
DECLARE reader record;
BEGIN
  FOR reader IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
                WHERE table_name = 'job_completion_segments' AND privilege_type = 'SELECT' AND grantee NOT IN (current_user, 'PUBLIC') LOOP
    EXECUTE 'GRANT EXECUTE ON FUNCTION fold_screen_summary_deltas(int) TO ' || quote_ident(reader.grantee);
  END LOOP;
END
$$;

-- What the summaries must hold, computed from the screens, for the jobs in `job_ids` (all
-- when null): per job, and per completion bucket. Exact sums of the stored doubles, as the
-- writers' side sums them.
DROP FUNCTION expected_job_screen_stats(uuid[]);
CREATE FUNCTION expected_job_screen_stats(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, in_progress int, completed int, expired int, scored int, score_sum numeric)
LANGUAGE sql STABLE SET extra_float_digits = 3 AS $$
  SELECT s.job_id,
         count(*) FILTER (WHERE s.status = 'in_progress')::int,
         count(*) FILTER (WHERE s.status = 'completed')::int,
         count(*) FILTER (WHERE s.status = 'expired')::int,
         count(s.score) FILTER (WHERE s.status = 'completed')::int,
         coalesce(sum(s.score::text::numeric) FILTER (WHERE s.status = 'completed'), 0)
  FROM screens s
  WHERE job_ids IS NULL OR s.job_id = ANY (job_ids)
  GROUP BY s.job_id
$$;

CREATE FUNCTION expected_job_completion_buckets(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, bucket timestamptz, completed int, scored int, score_sum numeric)
LANGUAGE sql STABLE SET extra_float_digits = 3 AS $$
  SELECT s.job_id, completion_bucket(s.completed_at), count(*)::int, count(s.score)::int, coalesce(sum(s.score::text::numeric), 0)
  FROM screens s
  WHERE s.status = 'completed' AND (job_ids IS NULL OR s.job_id = ANY (job_ids))
  GROUP BY 1, 2
$$;

-- What the summaries hold: the summary rows plus the unfolded deltas, per job, and per
-- bucket (a segment's start, a window's quarter hour). `source` tells which table a bucket's
-- figures came from, for the drift check's report ('segment', 'quarter'; deltas count in
-- the kind their bucket has).
CREATE FUNCTION stored_job_screen_stats(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, in_progress int, completed int, expired int, scored int, score_sum numeric)
LANGUAGE sql STABLE AS $$
  SELECT job_id, sum(in_progress)::int, sum(completed)::int, sum(expired)::int, sum(scored)::int, sum(score_sum)
  FROM (
    SELECT job_id, in_progress, completed, expired, scored, score_sum FROM job_screen_stats WHERE job_ids IS NULL OR job_id = ANY (job_ids)
    UNION ALL
    SELECT job_id, in_progress, completed, expired, scored, score_sum FROM screen_summary_deltas WHERE job_ids IS NULL OR job_id = ANY (job_ids)
  ) s
  GROUP BY job_id
$$;

CREATE FUNCTION stored_job_completion_buckets(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, bucket timestamptz, kind text, completed int, scored int, score_sum numeric)
LANGUAGE sql STABLE AS $$
  SELECT job_id, bucket, CASE WHEN p.window_start IS NULL THEN 'segment' ELSE 'quarter' END,
         sum(completed)::int, sum(scored)::int, sum(score_sum)
  FROM (
    SELECT job_id, segment AS bucket, completed, scored, score_sum FROM job_completion_segments
    WHERE job_ids IS NULL OR job_id = ANY (job_ids)
    UNION ALL
    SELECT b.job_id, b.window_start + u.quarter * interval '15 minutes',
           u.completed - lag(u.completed, 1, 0) OVER w, u.scored - lag(u.scored, 1, 0) OVER w,
           u.score_sum - lag(u.score_sum, 1, 0::numeric) OVER w
    FROM job_completion_boundaries b
    CROSS JOIN LATERAL unnest(b.quarters, b.completed_through, b.scored_through, b.score_sum_through) WITH ORDINALITY u(quarter, completed, scored, score_sum, i)
    WHERE job_ids IS NULL OR b.job_id = ANY (job_ids)
    WINDOW w AS (PARTITION BY b.job_id, b.window_start, b.slot ORDER BY u.i)
    UNION ALL
    SELECT job_id, bucket, completed, scored, score_sum FROM screen_summary_deltas
    WHERE bucket IS NOT NULL AND (job_ids IS NULL OR job_id = ANY (job_ids))
  ) s
  CROSS JOIN LATERAL completion_place(s.bucket) p
  GROUP BY 1, 2, 3
$$;

-- Summary rows a reader would misread, whatever their figures add up to: boundary rows whose
-- quarter hours are not strictly ascending within 0 to 103, whose arrays are not plain
-- one-dimensional lists from 1 without NULLs, or whose window does not start on a Sunday
-- 10:00 UTC; segment rows that are not at a segment's start. verify-stats counts them as
-- malformed; --fix deletes them and appends what they should have held.
CREATE FUNCTION malformed_job_completion_boundaries(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, window_start timestamptz, slot smallint)
LANGUAGE sql STABLE AS $$
  SELECT b.job_id, b.window_start, b.slot FROM job_completion_boundaries b
  WHERE (job_ids IS NULL OR b.job_id = ANY (job_ids))
    AND (b.window_start IS DISTINCT FROM date_bin('7 days', b.window_start, timestamptz '2000-01-02 10:00+00')
         OR array_ndims(b.quarters) <> 1 OR array_ndims(b.completed_through) <> 1 OR array_ndims(b.scored_through) <> 1
         OR array_ndims(b.score_sum_through) <> 1
         OR array_lower(b.quarters, 1) <> 1 OR array_lower(b.completed_through, 1) <> 1 OR array_lower(b.scored_through, 1) <> 1
         OR array_lower(b.score_sum_through, 1) <> 1
         OR array_position(b.completed_through, NULL) IS NOT NULL OR array_position(b.scored_through, NULL) IS NOT NULL
         OR array_position(b.score_sum_through, NULL) IS NOT NULL
         OR EXISTS (SELECT 1 FROM unnest(b.quarters) WITH ORDINALITY u(quarter, i)
                    WHERE u.quarter IS NULL OR u.quarter NOT BETWEEN 0 AND 103 OR u.quarter <= b.quarters[u.i - 1]))
$$;

CREATE FUNCTION malformed_job_completion_segments(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, segment timestamptz, slot smallint)
LANGUAGE sql STABLE AS $$
  SELECT c.job_id, c.segment, c.slot FROM job_completion_segments c
  WHERE (job_ids IS NULL OR c.job_id = ANY (job_ids))
    AND (completion_place(c.segment)).segment IS DISTINCT FROM c.segment
$$;

-- The deltas that make what is stored equal what the screens say, for the jobs in `job_ids`:
-- per bucket, the difference; per job, the difference less what the buckets' rows already
-- add. Computed in one snapshot, screens and summaries alike, so appending them is right
-- beside live writers (each writer's screens and deltas commit together); the caller holds
-- the fold's lock, so the summaries do not move in between (verify-stats --fix).
CREATE FUNCTION screen_summary_corrections(job_ids uuid[])
RETURNS TABLE (job_id uuid, bucket timestamptz, in_progress int, completed int, expired int, scored int, score_sum numeric)
LANGUAGE sql STABLE AS $$
  WITH buckets AS (
    SELECT coalesce(e.job_id, s.job_id) AS job_id, coalesce(e.bucket, s.bucket) AS bucket,
           coalesce(e.completed, 0) - coalesce(s.completed, 0) AS completed, coalesce(e.scored, 0) - coalesce(s.scored, 0) AS scored,
           coalesce(e.score_sum, 0) - coalesce(s.score_sum, 0) AS score_sum
    FROM expected_job_completion_buckets(job_ids) e
    FULL JOIN stored_job_completion_buckets(job_ids) s ON s.job_id = e.job_id AND s.bucket = e.bucket
  ), per_job AS (
    SELECT coalesce(e.job_id, s.job_id) AS job_id,
           coalesce(e.in_progress, 0) - coalesce(s.in_progress, 0) AS in_progress,
           coalesce(e.completed, 0) - coalesce(s.completed, 0) AS completed,
           coalesce(e.expired, 0) - coalesce(s.expired, 0) AS expired,
           coalesce(e.scored, 0) - coalesce(s.scored, 0) AS scored,
           coalesce(e.score_sum, 0) - coalesce(s.score_sum, 0) AS score_sum
    FROM expected_job_screen_stats(job_ids) e
    FULL JOIN stored_job_screen_stats(job_ids) s ON s.job_id = e.job_id
  ), changes AS (
    SELECT job_id, bucket, 0 AS in_progress, completed, 0 AS expired, scored, score_sum FROM buckets
    WHERE completed <> 0 OR scored <> 0 OR score_sum <> 0
    UNION ALL
    SELECT j.job_id, NULL, j.in_progress, j.completed - coalesce(b.completed, 0), j.expired,
           j.scored - coalesce(b.scored, 0), j.score_sum - coalesce(b.score_sum, 0)
    FROM per_job j
    LEFT JOIN (SELECT job_id, sum(completed)::int AS completed, sum(scored)::int AS scored, sum(score_sum) AS score_sum
               FROM buckets GROUP BY job_id) b ON b.job_id = j.job_id
  )
  SELECT c.job_id, c.bucket, c.in_progress, c.completed, c.expired, c.scored, c.score_sum FROM changes c
  WHERE (c.in_progress <> 0 OR c.completed <> 0 OR c.expired <> 0 OR c.scored <> 0 OR c.score_sum <> 0)
    AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = c.job_id)
$$;

DROP FUNCTION expected_job_completion_segments(uuid[]);
DROP FUNCTION expected_job_completion_quarters(uuid[]);
DROP FUNCTION stored_job_completion_quarters(uuid[]);

-- Replaces the summaries of the jobs in `job_ids` (all when null) with what the screens say,
-- in slot 0, deltas included. It counts as one more change, at the clock: no ETag of an
-- earlier state matches the rebuilt one. The caller keeps writers of those
-- screens out (the bench's loader); beside live writers, use verify-stats --fix. It holds
-- the fold's lock, so no fold runs in between, and keeps writers of screens out until it
-- commits.
DROP FUNCTION rebuild_screen_summaries(uuid[]);
CREATE FUNCTION rebuild_screen_summaries(job_ids uuid[] DEFAULT NULL) RETURNS void
LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(8146720561340517);
  -- Its statements read in several snapshots: no write may fall between them.
  LOCK TABLE screens IN SHARE MODE;
  INSERT INTO job_screen_stats AS t (job_id, slot, version, changes, changes_hash)
  SELECT job_id, 0, greatest(max(version) + 1, summaries_clock()), sum(changes) + 1,
         bit_xor(hash) # hashint8extended(summaries_clock(), 1)
  FROM (SELECT job_id, version, changes, changes_hash AS hash FROM job_screen_stats WHERE job_ids IS NULL OR job_id = ANY (job_ids)
        UNION ALL
        SELECT job_id, changed_at, 1, hashint8extended(id, 0) FROM screen_summary_deltas WHERE job_ids IS NULL OR job_id = ANY (job_ids)) c
  WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.id = c.job_id)
  GROUP BY job_id
  ON CONFLICT (job_id, slot) DO UPDATE SET in_progress = 0, completed = 0, expired = 0, scored = 0, score_sum = 0,
    version = excluded.version, changes = excluded.changes, changes_hash = excluded.changes_hash;
  DELETE FROM screen_summary_deltas WHERE job_ids IS NULL OR job_id = ANY (job_ids);
  DELETE FROM job_screen_stats WHERE slot <> 0 AND (job_ids IS NULL OR job_id = ANY (job_ids));
  INSERT INTO job_screen_stats AS t (job_id, slot, in_progress, completed, expired, scored, score_sum, version, changes)
  SELECT job_id, 0, in_progress, completed, expired, scored, score_sum, summaries_clock(), 1 FROM expected_job_screen_stats(job_ids)
  -- (A job with no row yet: its first change.)
  ON CONFLICT (job_id, slot) DO UPDATE SET in_progress = excluded.in_progress, completed = excluded.completed,
    expired = excluded.expired, scored = excluded.scored, score_sum = excluded.score_sum;
  DELETE FROM job_completion_segments WHERE job_ids IS NULL OR job_id = ANY (job_ids);
  DELETE FROM job_completion_boundaries WHERE job_ids IS NULL OR job_id = ANY (job_ids);
  INSERT INTO job_completion_segments (job_id, segment, slot, completed, scored, score_sum)
  SELECT e.job_id, p.segment, 0, e.completed, e.scored, e.score_sum
  FROM expected_job_completion_buckets(job_ids) e CROSS JOIN LATERAL completion_place(e.bucket) p
  WHERE p.segment IS NOT NULL;
  INSERT INTO job_completion_boundaries (job_id, window_start, slot, quarters, completed_through, scored_through, score_sum_through)
  SELECT job_id, window_start, 0, array_agg(quarter ORDER BY quarter), array_agg(completed ORDER BY quarter),
         array_agg(scored ORDER BY quarter), array_agg(score_sum ORDER BY quarter)
  FROM (
    SELECT e.job_id, p.window_start, p.quarter,
           (sum(e.completed) OVER w)::int AS completed, (sum(e.scored) OVER w)::int AS scored, sum(e.score_sum) OVER w AS score_sum
    FROM expected_job_completion_buckets(job_ids) e CROSS JOIN LATERAL completion_place(e.bucket) p
    WHERE p.window_start IS NOT NULL
    WINDOW w AS (PARTITION BY e.job_id, p.window_start ORDER BY p.quarter)
  ) running
  GROUP BY job_id, window_start;
$$;

DROP FUNCTION boundary_totals_add(int[], int[], int[], numeric[], int, int, int, numeric);

-- A job's completed screens by local week in `tz` (only the weeks from `first_week` to
-- `last_week` when given): a segment is inside one local week; a boundary window splits at
-- the zone's Monday 00:00, found from the zone's UTC offset at the window's two ends when
-- they agree (the running totals up to that quarter hour are the week before, the rest the
-- week after), and otherwise, where the offset changes inside the window, quarter hour by
-- quarter hour; an unfolded delta is in the week of its bucket. Two rows a week per slot
-- written (one after a rebuild or a fold), plus the deltas not yet folded, whatever the
-- number of screens.
CREATE OR REPLACE FUNCTION job_completion_weeks(job uuid, tz text, first_week timestamp DEFAULT NULL, last_week timestamp DEFAULT NULL)
RETURNS TABLE (week timestamp, completed int, scored int, score_sum numeric)
-- SQL, so that PostgreSQL inlines it into the caller's statement (planned once per
-- connection with it) rather than run it as a function of its own: measured 0.03 to 0.06 ms
-- less a request than plpgsql.
LANGUAGE sql STABLE AS $$
  -- With a range, only what can fall into it: a day of slack around the range's instants.
  WITH bounds AS (
    SELECT coalesce((first_week AT TIME ZONE tz) - interval '2 days', '-infinity'::timestamptz) AS lo,
           coalesce(((last_week + interval '8 days') AT TIME ZONE tz) + interval '1 day', 'infinity'::timestamptz) AS hi
  ), windows AS MATERIALIZED (
    -- Per stored row: the week that begins in the window, and where the zone splits it.
    SELECT b.window_start, b.slot, (b.window_start + interval '14 hours') AT TIME ZONE 'UTC' AS monday, k.split,
           coalesce(b.completed_through[k.i], 0) AS completed_before, coalesce(b.scored_through[k.i], 0) AS scored_before,
           coalesce(b.score_sum_through[k.i], 0) AS score_sum_before,
           b.completed_through[cardinality(b.quarters)] AS completed, b.scored_through[cardinality(b.quarters)] AS scored,
           b.score_sum_through[cardinality(b.quarters)] AS score_sum
    FROM bounds, job_completion_boundaries b
    CROSS JOIN LATERAL (
      SELECT s.split, width_bucket(s.split - 1, b.quarters) AS i
      FROM (SELECT CASE WHEN o.first = o.last AND o.first % 900 = 0 AND o.first BETWEEN -43200 AND 50400
                        THEN (50400 - o.first) / 900 END AS split
            -- The zone's UTC offsets, in seconds (a difference of epochs, cast after: an epoch
            -- after 2038 does not fit an int).
            FROM (SELECT (extract(epoch FROM b.window_start AT TIME ZONE tz) - extract(epoch FROM b.window_start))::int AS first,
                         (extract(epoch FROM (b.window_start + interval '25 hours 45 minutes') AT TIME ZONE tz)
                           - extract(epoch FROM b.window_start + interval '25 hours 45 minutes'))::int AS last
                  OFFSET 0) o
            OFFSET 0) s
      OFFSET 0) k
    WHERE b.job_id = job AND b.window_start >= bounds.lo AND b.window_start < bounds.hi
  ), parts AS (
    SELECT monday - interval '7 days' AS week, completed_before AS completed, scored_before AS scored, score_sum_before AS score_sum
    FROM windows WHERE split IS NOT NULL
    UNION ALL
    SELECT monday, completed - completed_before, scored - scored_before, score_sum - score_sum_before
    FROM windows WHERE split IS NOT NULL
    UNION ALL
    SELECT date_trunc('week', (w.window_start + q.quarter * interval '15 minutes') AT TIME ZONE tz), q.completed, q.scored, q.score_sum
    FROM windows w
    JOIN job_completion_boundaries b ON b.job_id = job AND b.window_start = w.window_start AND b.slot = w.slot
    CROSS JOIN LATERAL (
      SELECT u.quarter, u.completed - lag(u.completed, 1, 0) OVER r AS completed, u.scored - lag(u.scored, 1, 0) OVER r AS scored,
             u.score_sum - lag(u.score_sum, 1, 0::numeric) OVER r AS score_sum
      FROM unnest(b.quarters, b.completed_through, b.scored_through, b.score_sum_through) WITH ORDINALITY u(quarter, completed, scored, score_sum, i)
      WINDOW r AS (ORDER BY u.i)
    ) q
    WHERE w.split IS NULL
    UNION ALL
    SELECT date_trunc('week', c.segment AT TIME ZONE tz), c.completed, c.scored, c.score_sum
    FROM bounds, job_completion_segments c
    WHERE c.job_id = job AND c.segment >= bounds.lo AND c.segment < bounds.hi
    UNION ALL
    SELECT date_trunc('week', d.bucket AT TIME ZONE tz), d.completed, d.scored, d.score_sum
    FROM bounds, screen_summary_deltas d
    WHERE d.job_id = job AND d.bucket >= bounds.lo AND d.bucket < bounds.hi
  )
  SELECT p.week, sum(p.completed)::int, sum(p.scored)::int, sum(p.score_sum)
  FROM parts p
  WHERE first_week IS NULL OR p.week BETWEEN first_week AND last_week
  GROUP BY p.week
  HAVING sum(p.completed) > 0
$$;

-- The summaries of the screens already written are made exact by the next migration.
