-- Summaries of screens, second layout (issue 13), their upkeep: the triggers' functions for
-- the boundary windows of 20261123120000_completion_boundaries, the reading of a zone's
-- weeks, and the rebuild of every summary from the screens. The design, the alternatives
-- weighed and what was measured: docs/summaries-design.md.
--
-- Until now a week boundary's 26 hours were kept as up to 104 rows of 15 minutes each, and
-- a zone's bins summed every one of them: a dense job read about 11,000 rows for two years
-- and converted each to local time. Now each boundary window is one row of running totals
-- by quarter hour (per slot), and a zone's split of it is one lookup.

-- No writer may change screens until this migration commits: the triggers are replaced and
-- the summaries rebuilt in between. Readers are not blocked: they see the old summaries
-- until the commit.
LOCK TABLE screens IN SHARE ROW EXCLUSIVE MODE;

-- Where a completion at `t` is summarised. A local week starts on Monday 00:00 local time;
-- for every UTC offset from -12:00 to +14:00 that instant lies in the boundary window from
-- Sunday 10:00 to Monday 12:00 UTC. The rest of the UTC week, the segment from Monday 12:00
-- to Sunday 10:00, lies inside one local week in every zone. In a window, the completion
-- counts in its quarter hour (0 to 103): every zone's offset since the 1970s is a multiple
-- of 15 minutes, so no quarter hour straddles a local week boundary. Before 1980, when some
-- offsets were not, a completion is its own segment. 2000-01-02 is a Sunday.
--
-- plpgsql, as every function of the triggers' path: a SQL function called from plpgsql is
-- planned anew on each call (measured: a third of the trigger's cost).
CREATE FUNCTION completion_place(t timestamptz, OUT segment timestamptz, OUT window_start timestamptz, OUT quarter int)
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

-- Adds figures at `quarter` to a boundary row's running totals: the quarter's entry is made
-- if missing (starting from the total before it), then it and every later entry grow.
CREATE FUNCTION boundary_totals_add(
  quarters int[], completed_through int[], scored_through int[], score_sum_through numeric[],
  quarter int, completed int, scored int, score_sum numeric,
  OUT new_quarters int[], OUT new_completed_through int[], OUT new_scored_through int[], OUT new_score_sum_through numeric[])
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  i int := width_bucket(quarter, quarters); -- the entries up to `quarter`
  n int := cardinality(quarters);
BEGIN
  new_quarters := quarters;
  new_completed_through := completed_through;
  new_scored_through := scored_through;
  new_score_sum_through := score_sum_through;
  IF i = 0 OR quarters[i] <> quarter THEN
    new_quarters := quarters[1:i] || quarter || quarters[i + 1:n];
    new_completed_through := completed_through[1:i] || coalesce(completed_through[i], 0) || completed_through[i + 1:n];
    new_scored_through := scored_through[1:i] || coalesce(scored_through[i], 0) || scored_through[i + 1:n];
    new_score_sum_through := score_sum_through[1:i] || coalesce(score_sum_through[i], 0) || score_sum_through[i + 1:n];
    i := i + 1;
    n := n + 1;
  END IF;
  -- In place: plpgsql edits an array variable without copying it.
  FOR k IN i..n LOOP
    new_completed_through[k] := new_completed_through[k] + completed;
    new_scored_through[k] := new_scored_through[k] + scored;
    new_score_sum_through[k] := new_score_sum_through[k] + score_sum;
  END LOOP;
END
$$;

-- A version of the summaries: never below the clock (in microseconds), so that a version
-- given out before the database was restored from an older backup does not come back with
-- other figures. An inlined SQL expression where a statement uses it.
CREATE FUNCTION summaries_clock() RETURNS bigint
LANGUAGE sql VOLATILE AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint $$;

-- The changes below go to the slot of the writer's connection: concurrent writers of one
-- job mostly update different rows instead of queueing on one. A slot's `version` grows with
-- every change to it (its writers are serialised by the row's lock), so the list of a job's
-- (slot, version) names the set of changes a reader sees: the analytics ETag.
CREATE FUNCTION screen_stats_add(job uuid, d_in_progress int, d_completed int, d_expired int, d_scored int, d_score_sum numeric)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO job_screen_stats AS t (job_id, slot, in_progress, completed, expired, scored, score_sum, version)
  VALUES (job, pg_backend_pid() % 8, d_in_progress, d_completed, d_expired, d_scored, d_score_sum, summaries_clock())
  ON CONFLICT (job_id, slot) DO UPDATE SET
    in_progress = t.in_progress + excluded.in_progress,
    completed = t.completed + excluded.completed,
    expired = t.expired + excluded.expired,
    scored = t.scored + excluded.scored,
    score_sum = t.score_sum + excluded.score_sum,
    version = greatest(t.version + 1, excluded.version);
END
$$;

CREATE FUNCTION screen_completion_add(job uuid, t timestamptz, d_completed int, d_scored int, d_score_sum numeric)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  place record := completion_place(t);
  writer_slot smallint := pg_backend_pid() % 8;
BEGIN
  IF place.window_start IS NULL THEN
    INSERT INTO job_completion_segments AS s (job_id, segment, slot, completed, scored, score_sum)
    VALUES (job, place.segment, writer_slot, d_completed, d_scored, d_score_sum)
    ON CONFLICT (job_id, segment, slot) DO UPDATE SET
      completed = s.completed + excluded.completed,
      scored = s.scored + excluded.scored,
      score_sum = s.score_sum + excluded.score_sum;
  ELSE
    INSERT INTO job_completion_boundaries AS b (job_id, window_start, slot, quarters, completed_through, scored_through, score_sum_through)
    VALUES (job, place.window_start, writer_slot, ARRAY[place.quarter], ARRAY[d_completed], ARRAY[d_scored], ARRAY[d_score_sum])
    ON CONFLICT (job_id, window_start, slot) DO UPDATE SET
      (quarters, completed_through, scored_through, score_sum_through) =
        (SELECT * FROM boundary_totals_add(b.quarters, b.completed_through, b.scored_through, b.score_sum_through,
                                           place.quarter, d_completed, d_scored, d_score_sum));
  END IF;
END
$$;

-- Adds one screen to the summaries (sign 1) or takes it out (sign -1). Scores are summed as
-- numeric, so a job's sum is exact whatever the order.
CREATE OR REPLACE FUNCTION screen_summaries_add(s screens, sign int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  scored int := CASE WHEN s.status = 'completed' AND s.score IS NOT NULL THEN sign ELSE 0 END;
  score_sum numeric := CASE WHEN s.status = 'completed' AND s.score IS NOT NULL THEN sign * s.score::numeric ELSE 0 END;
BEGIN
  -- A deleted job's summaries go with it (foreign key, cascade); the deletes of its screens
  -- that the same cascade runs must not write them again. (An added screen's job exists:
  -- its foreign key says so.)
  IF sign < 0 AND NOT EXISTS (SELECT 1 FROM jobs WHERE id = s.job_id) THEN RETURN; END IF;
  PERFORM screen_stats_add(s.job_id, CASE WHEN s.status = 'in_progress' THEN sign ELSE 0 END,
                           CASE WHEN s.status = 'completed' THEN sign ELSE 0 END,
                           CASE WHEN s.status = 'expired' THEN sign ELSE 0 END, scored, score_sum);
  IF s.status = 'completed' THEN PERFORM screen_completion_add(s.job_id, s.completed_at, sign, scored, score_sum); END IF;
END
$$;

-- An update that keeps the screen in its job changes the job's figures by the difference,
-- one upsert per summary row touched, rather than taking the old screen out and adding the
-- new one (two upserts of the same rows): a score change costs half as much.
CREATE FUNCTION screen_summaries_change(o screens, n screens) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  old_scored int := CASE WHEN o.status = 'completed' AND o.score IS NOT NULL THEN 1 ELSE 0 END;
  new_scored int := CASE WHEN n.status = 'completed' AND n.score IS NOT NULL THEN 1 ELSE 0 END;
  old_sum numeric := CASE WHEN old_scored = 1 THEN o.score::numeric ELSE 0 END;
  new_sum numeric := CASE WHEN new_scored = 1 THEN n.score::numeric ELSE 0 END;
BEGIN
  PERFORM screen_stats_add(n.job_id,
    (n.status = 'in_progress')::int - (o.status = 'in_progress')::int,
    (n.status = 'completed')::int - (o.status = 'completed')::int,
    (n.status = 'expired')::int - (o.status = 'expired')::int,
    new_scored - old_scored, new_sum - old_sum);
  IF o.status = 'completed' AND n.status = 'completed'
     AND completion_place(o.completed_at) IS NOT DISTINCT FROM completion_place(n.completed_at) THEN
    IF new_scored <> old_scored OR new_sum <> old_sum THEN
      PERFORM screen_completion_add(n.job_id, n.completed_at, 0, new_scored - old_scored, new_sum - old_sum);
    END IF;
  ELSE
    IF o.status = 'completed' THEN PERFORM screen_completion_add(o.job_id, o.completed_at, -1, -old_scored, -old_sum); END IF;
    IF n.status = 'completed' THEN PERFORM screen_completion_add(n.job_id, n.completed_at, 1, new_scored, new_sum); END IF;
  END IF;
END
$$;

CREATE OR REPLACE FUNCTION screens_maintain_summaries() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    -- Figures to zero, versions on: a version never comes back with other figures.
    UPDATE job_screen_stats SET in_progress = 0, completed = 0, expired = 0, scored = 0, score_sum = 0,
                                version = greatest(version + 1, summaries_clock());
    DELETE FROM job_completion_segments;
    DELETE FROM job_completion_boundaries;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.job_id = NEW.job_id THEN
    PERFORM screen_summaries_change(OLD, NEW);
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM screen_summaries_add(OLD, -1); END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN PERFORM screen_summaries_add(NEW, 1); END IF;
  RETURN NULL;
END
$$;

-- What the summaries must hold, computed from the screens, for the jobs in `job_ids` or,
-- when it is null, for all: the rebuild below, `npm run admin -- verify-stats [--fix]` and
-- the benchmark's loader use these. (expected_job_screen_stats is unchanged.)
DROP FUNCTION expected_job_completion_segments(uuid[]);
CREATE FUNCTION expected_job_completion_segments(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, segment timestamptz, completed int, scored int, score_sum numeric)
LANGUAGE sql STABLE AS $$
  SELECT s.job_id, p.segment, count(*)::int, count(s.score)::int, coalesce(sum(s.score::numeric), 0)
  FROM screens s CROSS JOIN LATERAL completion_place(s.completed_at) p
  WHERE s.status = 'completed' AND p.segment IS NOT NULL AND (job_ids IS NULL OR s.job_id = ANY (job_ids))
  GROUP BY 1, 2
$$;

-- Per quarter hour of each boundary window: from the screens, and from the stored running
-- totals (each entry less the one before it, summed over slots). verify-stats compares them.
CREATE FUNCTION expected_job_completion_quarters(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, window_start timestamptz, quarter int, completed int, scored int, score_sum numeric)
LANGUAGE sql STABLE AS $$
  SELECT s.job_id, p.window_start, p.quarter, count(*)::int, count(s.score)::int, coalesce(sum(s.score::numeric), 0)
  FROM screens s CROSS JOIN LATERAL completion_place(s.completed_at) p
  WHERE s.status = 'completed' AND p.window_start IS NOT NULL AND (job_ids IS NULL OR s.job_id = ANY (job_ids))
  GROUP BY 1, 2, 3
$$;

CREATE FUNCTION stored_job_completion_quarters(job_ids uuid[] DEFAULT NULL)
RETURNS TABLE (job_id uuid, window_start timestamptz, quarter int, completed int, scored int, score_sum numeric)
LANGUAGE sql STABLE AS $$
  SELECT e.job_id, e.window_start, e.quarter, sum(e.completed)::int, sum(e.scored)::int, sum(e.score_sum)
  FROM (
    SELECT b.job_id, b.window_start, u.quarter,
           u.completed - lag(u.completed, 1, 0) OVER w AS completed, u.scored - lag(u.scored, 1, 0) OVER w AS scored,
           u.score_sum - lag(u.score_sum, 1, 0::numeric) OVER w AS score_sum
    FROM job_completion_boundaries b
    CROSS JOIN LATERAL unnest(b.quarters, b.completed_through, b.scored_through, b.score_sum_through) WITH ORDINALITY u(quarter, completed, scored, score_sum, i)
    WHERE job_ids IS NULL OR b.job_id = ANY (job_ids)
    WINDOW w AS (PARTITION BY b.job_id, b.window_start, b.slot ORDER BY u.i)
  ) e
  GROUP BY 1, 2, 3
$$;

-- Replaces the summaries of the jobs in `job_ids` (all when null) with what the screens say,
-- in slot 0, whose version ends above every version the job's slots had: the job's list of
-- (slot, version) is one it never had, so no ETag of an earlier state matches the rebuilt one. The caller keeps writers of those screens out (the migrations by
-- a lock on screens, verify-stats --fix by row locks) or the result can be stale.
DROP FUNCTION rebuild_screen_summaries(uuid[]);
CREATE FUNCTION rebuild_screen_summaries(job_ids uuid[] DEFAULT NULL) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO job_screen_stats AS t (job_id, slot, version)
  SELECT job_id, 0, greatest(max(version) + 1, summaries_clock()) FROM job_screen_stats
  WHERE job_ids IS NULL OR job_id = ANY (job_ids) GROUP BY job_id
  ON CONFLICT (job_id, slot) DO UPDATE SET in_progress = 0, completed = 0, expired = 0, scored = 0, score_sum = 0, version = excluded.version;
  DELETE FROM job_screen_stats WHERE slot <> 0 AND (job_ids IS NULL OR job_id = ANY (job_ids));
  INSERT INTO job_screen_stats AS t (job_id, slot, in_progress, completed, expired, scored, score_sum, version)
  SELECT job_id, 0, in_progress, completed, expired, scored, score_sum, summaries_clock() FROM expected_job_screen_stats(job_ids)
  ON CONFLICT (job_id, slot) DO UPDATE SET in_progress = excluded.in_progress, completed = excluded.completed,
    expired = excluded.expired, scored = excluded.scored, score_sum = excluded.score_sum;
  DELETE FROM job_completion_segments WHERE job_ids IS NULL OR job_id = ANY (job_ids);
  DELETE FROM job_completion_boundaries WHERE job_ids IS NULL OR job_id = ANY (job_ids);
  INSERT INTO job_completion_segments (job_id, segment, slot, completed, scored, score_sum)
  SELECT job_id, segment, 0, completed, scored, score_sum FROM expected_job_completion_segments(job_ids);
  INSERT INTO job_completion_boundaries (job_id, window_start, slot, quarters, completed_through, scored_through, score_sum_through)
  SELECT job_id, window_start, 0, array_agg(quarter ORDER BY quarter), array_agg(completed ORDER BY quarter),
         array_agg(scored ORDER BY quarter), array_agg(score_sum ORDER BY quarter)
  FROM (
    SELECT job_id, window_start, quarter,
           (sum(completed) OVER w)::int AS completed, (sum(scored) OVER w)::int AS scored, sum(score_sum) OVER w AS score_sum
    FROM expected_job_completion_quarters(job_ids)
    WINDOW w AS (PARTITION BY job_id, window_start ORDER BY quarter)
  ) running
  GROUP BY job_id, window_start;
$$;

DROP FUNCTION completion_segment(timestamptz);

-- A job's completed screens by local week in `tz` (only the weeks from `first_week` to
-- `last_week` when given): a segment is inside one local week; a boundary window splits at
-- the zone's Monday 00:00, found from the zone's UTC offset at the window's two ends when
-- they agree (the running totals up to that quarter hour are the week before, the rest the
-- week after), and otherwise, where the offset changes inside the window, quarter hour by
-- quarter hour. Two rows a week per slot written (one each after a rebuild), whatever the
-- number of screens. The per-quarter figures are recovered as in
-- stored_job_completion_quarters (each running total less the one before).
CREATE FUNCTION job_completion_weeks(job uuid, tz text, first_week timestamp DEFAULT NULL, last_week timestamp DEFAULT NULL)
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
  )
  SELECT p.week, sum(p.completed)::int, sum(p.scored)::int, sum(p.score_sum)
  FROM parts p
  WHERE first_week IS NULL OR p.week BETWEEN first_week AND last_week
  GROUP BY p.week
  HAVING sum(p.completed) > 0
$$;

-- The backfill: every job's summaries from its screens, in the new layout.
SELECT rebuild_screen_summaries();
