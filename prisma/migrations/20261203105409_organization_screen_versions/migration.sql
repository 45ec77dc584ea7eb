-- The rollup's version in one row per organization (issue 56, part 4). The version of a
-- rollup's figures was every selected job's summary rows and unfolded deltas, looked up job by
-- job: 10,000 jobs cost about 12 ms of index lookups, for a 304 or a kept answer. Now it is the
-- organization's row here (the fold adds to it what it adds to its jobs', in the same commit;
-- rebuilds and TRUNCATE count as changes, as for a job) and the organization's unfolded deltas,
-- beside the count and hash of the selected jobs' ids. Writers pay nothing: only the fold, a
-- rebuild and the TRUNCATE trigger write it.
SELECT pg_advisory_xact_lock(8146720561340517);

-- CreateTable
CREATE TABLE "organization_screen_stats" (
    "organization_id" UUID NOT NULL,
    "version" BIGINT NOT NULL DEFAULT 0,
    "changes" BIGINT NOT NULL DEFAULT 0,
    "changes_hash" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "organization_screen_stats_pkey" PRIMARY KEY ("organization_id")
);

-- Every organization's folded changes so far, as the fold would have counted them.
INSERT INTO organization_screen_stats (organization_id, version, changes, changes_hash)
SELECT j.organization_id, max(s.version), sum(s.changes), bit_xor(s.changes_hash)
FROM job_screen_stats s JOIN jobs j ON j.id = s.job_id
GROUP BY j.organization_id;

-- Summaries: counts a rebuild of job_ids (all when null) in their organizations' versions: the
-- deltas it drops, and one change more. Called by rebuild_screen_summaries, before it drops them.
CREATE OR REPLACE FUNCTION public.organization_screen_stats_rebuilt(job_ids uuid[])
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
  INSERT INTO organization_screen_stats AS t (organization_id, version, changes, changes_hash)
  SELECT j.organization_id, greatest(coalesce(max(d.changed_at), 0) + 1, summaries_clock()), count(d.id) + 1,
         coalesce(bit_xor(hashint8extended(d.id, 0)), 0) # hashint8extended(summaries_clock(), 1)
  FROM jobs j LEFT JOIN screen_summary_deltas d ON d.job_id = j.id
  WHERE job_ids IS NULL OR j.id = ANY (job_ids)
  GROUP BY j.organization_id
  ON CONFLICT (organization_id) DO UPDATE SET
    version = greatest(t.version + 1, excluded.version), changes = t.changes + excluded.changes,
    changes_hash = t.changes_hash # excluded.changes_hash
$function$;

-- Summaries: counts a TRUNCATE of screens in every organization's version: the deltas it drops,
-- and one change more. Called by screens_maintain_summaries (as the truncating role, hence
-- SECURITY DEFINER: the writers have no right to this table).
CREATE OR REPLACE FUNCTION public.organization_screen_stats_truncated()
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
  INSERT INTO organization_screen_stats AS t (organization_id, version, changes, changes_hash)
  SELECT j.organization_id, max(d.changed_at), count(*), bit_xor(hashint8extended(d.id, 0))
  FROM screen_summary_deltas d JOIN jobs j ON j.id = d.job_id
  GROUP BY j.organization_id
  ON CONFLICT (organization_id) DO UPDATE SET
    version = greatest(t.version, excluded.version), changes = t.changes + excluded.changes,
    changes_hash = t.changes_hash # excluded.changes_hash;
  UPDATE organization_screen_stats t SET changes = t.changes + 1, version = greatest(t.version + 1, summaries_clock()),
    changes_hash = t.changes_hash # hashint8extended(summaries_clock(), 1);
$function$;

CREATE OR REPLACE FUNCTION public.fold_screen_summary_deltas(max_deltas integer DEFAULT 20000)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  locked uuid[];
  moved int;
BEGIN
  IF NOT pg_try_advisory_xact_lock(8146720561340517) THEN RETURN 0; END IF;
  -- The changes writers left for the log (job_changes_pending_log logs them as they go).
  DELETE FROM job_changes_pending;
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
    -- The oldest max_deltas of the locked jobs' deltas: those up to the last one's id (ids are
    -- unique), without joining the deltas back to a list of themselves.
    DELETE FROM screen_summary_deltas
    WHERE job_id = ANY (locked)
      AND id <= (SELECT max(id) FROM (SELECT id FROM screen_summary_deltas WHERE job_id = ANY (locked) ORDER BY id LIMIT max_deltas) oldest)
    RETURNING id, job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at
  ), per_job AS (
    -- Each job's sums once, for its row and its organization's.
    SELECT job_id, sum(in_progress) AS in_progress, sum(completed) AS completed, sum(expired) AS expired, sum(scored) AS scored,
           sum(score_sum) AS score_sum, max(changed_at) AS version, count(*) AS changes, bit_xor(hashint8extended(id, 0)) AS hash
    FROM moved GROUP BY job_id
  ), stats AS (
    INSERT INTO job_screen_stats AS t (job_id, slot, in_progress, completed, expired, scored, score_sum, version, changes, changes_hash)
    SELECT job_id, 0, in_progress, completed, expired, scored, score_sum, version, changes, hash FROM per_job
    ON CONFLICT (job_id, slot) DO UPDATE SET
      in_progress = t.in_progress + excluded.in_progress, completed = t.completed + excluded.completed,
      expired = t.expired + excluded.expired, scored = t.scored + excluded.scored, score_sum = t.score_sum + excluded.score_sum,
      version = greatest(t.version, excluded.version), changes = t.changes + excluded.changes,
      changes_hash = t.changes_hash # excluded.changes_hash
  ), organization_stats AS (
    -- The same changes under each job's organization, in the same commit: the rollup's version
    -- (this row and the organization's unfolded deltas) is the same before and after.
    INSERT INTO organization_screen_stats AS t (organization_id, version, changes, changes_hash)
    SELECT j.organization_id, max(p.version), sum(p.changes), bit_xor(p.hash)
    FROM per_job p JOIN jobs j ON j.id = p.job_id
    GROUP BY j.organization_id
    ON CONFLICT (organization_id) DO UPDATE SET
      version = greatest(t.version, excluded.version), changes = t.changes + excluded.changes,
      changes_hash = t.changes_hash # excluded.changes_hash
  ), places AS (
    -- A place per bucket, not per delta: a busy job's deltas share a few hundred buckets.
    SELECT m.job_id, p.segment, p.window_start, p.quarter,
           sum(m.completed)::bigint AS completed, sum(m.scored)::bigint AS scored, sum(m.score_sum) AS score_sum
    FROM (SELECT job_id, bucket, sum(completed) AS completed, sum(scored) AS scored, sum(score_sum) AS score_sum
          FROM moved WHERE bucket IS NOT NULL GROUP BY 1, 2) m
    CROSS JOIN LATERAL completion_place(m.bucket) p
    GROUP BY 1, 2, 3, 4
  ), segments AS (
    INSERT INTO job_completion_segments AS s (job_id, segment, slot, completed, scored, score_sum)
    SELECT job_id, segment, 0, completed, scored, score_sum FROM places WHERE segment IS NOT NULL
    ON CONFLICT (job_id, segment, slot) DO UPDATE SET
      completed = s.completed + excluded.completed, scored = s.scored + excluded.scored, score_sum = s.score_sum + excluded.score_sum
  ), windows AS (
    -- Each window touched, from its slot 0 row's running totals (none: zeros) and this fold's
    -- quarter hours: a quarter's new total is its old one (or the old one of the quarter before,
    -- for a quarter new to the row) plus this fold's amounts up to it. Per window, so that
    -- nothing is sorted or hashed but a window's own hundred quarters.
    INSERT INTO job_completion_boundaries AS b (job_id, window_start, slot, quarters, completed_through, scored_through, score_sum_through)
    SELECT w.job_id, w.window_start, 0, n.quarters, n.completed, n.scored, n.score_sum
    FROM (SELECT job_id, window_start, array_agg(quarter) AS q, array_agg(completed) AS c, array_agg(scored) AS s, array_agg(score_sum) AS ss
          FROM places WHERE window_start IS NOT NULL GROUP BY 1, 2) w
    LEFT JOIN job_completion_boundaries o ON o.job_id = w.job_id AND o.window_start = w.window_start AND o.slot = 0
    CROSS JOIN LATERAL (
      SELECT array_agg(u.quarter ORDER BY u.quarter) AS quarters,
             array_agg((u.c + a.c)::int ORDER BY u.quarter) AS completed,
             array_agg((u.s + a.s)::int ORDER BY u.quarter) AS scored,
             array_agg(u.ss + a.ss ORDER BY u.quarter) AS score_sum
      FROM (
        SELECT t.quarter, t.c, t.s, t.ss
        FROM unnest(o.quarters, o.completed_through, o.scored_through, o.score_sum_through) t(quarter, c, s, ss)
        UNION ALL
        SELECT nq, coalesce(before.c, 0), coalesce(before.s, 0), coalesce(before.ss, 0)
        FROM unnest(w.q) nq
        LEFT JOIN LATERAL (
          SELECT t.c, t.s, t.ss FROM unnest(o.quarters, o.completed_through, o.scored_through, o.score_sum_through) t(quarter, c, s, ss)
          WHERE t.quarter < nq ORDER BY t.quarter DESC LIMIT 1
        ) before ON true
        WHERE o.quarters IS NULL OR NOT nq = ANY (o.quarters)
      ) u
      CROSS JOIN LATERAL (
        SELECT coalesce(sum(f.c), 0) AS c, coalesce(sum(f.s), 0) AS s, coalesce(sum(f.ss), 0) AS ss
        FROM unnest(w.q, w.c, w.s, w.ss) f(quarter, c, s, ss) WHERE f.quarter <= u.quarter
      ) a
    ) n
    ON CONFLICT (job_id, window_start, slot) DO UPDATE SET
      quarters = excluded.quarters, completed_through = excluded.completed_through,
      scored_through = excluded.scored_through, score_sum_through = excluded.score_sum_through
  )
  SELECT count(*)::int INTO moved FROM moved;
  RETURN moved;
END
$function$;

CREATE OR REPLACE FUNCTION public.rebuild_screen_summaries(job_ids uuid[] DEFAULT NULL::uuid[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  figures_before jsonb;
  shown_changed uuid[];
  analytics_changed uuid[];
BEGIN
  PERFORM pg_advisory_xact_lock(8146720561340517);
  -- Its statements read in several snapshots: no write may fall between them.
  LOCK TABLE screens IN SHARE MODE;
  SELECT coalesce(jsonb_object_agg(f.job_id, jsonb_build_array(f.shown, f.figures)), '{}') INTO figures_before FROM job_figures(job_ids) f;
  PERFORM organization_screen_stats_rebuilt(job_ids);
  INSERT INTO job_screen_stats AS t (job_id, slot, version, changes, changes_hash)
  SELECT job_id, 0, greatest(max(version) + 1, summaries_clock()), sum(changes) + 1,
         bit_xor(hash) # hashint8extended(summaries_clock(), 1)
  FROM (SELECT s.job_id, s.version, s.changes, s.changes_hash AS hash FROM job_screen_stats s WHERE job_ids IS NULL OR s.job_id = ANY (job_ids)
        UNION ALL
        SELECT d.job_id, d.changed_at, 1, hashint8extended(d.id, 0) FROM screen_summary_deltas d WHERE job_ids IS NULL OR d.job_id = ANY (job_ids)) c
  WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.id = c.job_id)
  GROUP BY c.job_id
  ON CONFLICT (job_id, slot) DO UPDATE SET in_progress = 0, completed = 0, expired = 0, scored = 0, score_sum = 0,
    version = excluded.version, changes = excluded.changes, changes_hash = excluded.changes_hash;
  DELETE FROM screen_summary_deltas d WHERE job_ids IS NULL OR d.job_id = ANY (job_ids);
  DELETE FROM job_screen_stats s WHERE s.slot <> 0 AND (job_ids IS NULL OR s.job_id = ANY (job_ids));
  INSERT INTO job_screen_stats AS t (job_id, slot, in_progress, completed, expired, scored, score_sum, version, changes)
  SELECT e.job_id, 0, e.in_progress, e.completed, e.expired, e.scored, e.score_sum, summaries_clock(), 1 FROM expected_job_screen_stats(job_ids) e
  -- (A job with no row yet: its first change.)
  ON CONFLICT (job_id, slot) DO UPDATE SET in_progress = excluded.in_progress, completed = excluded.completed,
    expired = excluded.expired, scored = excluded.scored, score_sum = excluded.score_sum;
  DELETE FROM job_completion_segments c WHERE job_ids IS NULL OR c.job_id = ANY (job_ids);
  DELETE FROM job_completion_boundaries b WHERE job_ids IS NULL OR b.job_id = ANY (job_ids);
  INSERT INTO job_completion_segments (job_id, segment, slot, completed, scored, score_sum)
  SELECT e.job_id, p.segment, 0, e.completed, e.scored, e.score_sum
  FROM expected_job_completion_buckets(job_ids) e CROSS JOIN LATERAL completion_place(e.bucket) p
  WHERE p.segment IS NOT NULL;
  INSERT INTO job_completion_boundaries (job_id, window_start, slot, quarters, completed_through, scored_through, score_sum_through)
  SELECT running.job_id, running.window_start, 0, array_agg(running.quarter ORDER BY running.quarter), array_agg(running.completed ORDER BY running.quarter),
         array_agg(running.scored ORDER BY running.quarter), array_agg(running.score_sum ORDER BY running.quarter)
  FROM (
    SELECT e.job_id, p.window_start, p.quarter,
           (sum(e.completed) OVER w)::int AS completed, (sum(e.scored) OVER w)::int AS scored, sum(e.score_sum) OVER w AS score_sum
    FROM expected_job_completion_buckets(job_ids) e CROSS JOIN LATERAL completion_place(e.bucket) p
    WHERE p.window_start IS NOT NULL
    WINDOW w AS (PARTITION BY e.job_id, p.window_start ORDER BY p.quarter)
  ) running
  GROUP BY running.job_id, running.window_start;
  -- A job whose counts or average changed, for every key; one whose analytics alone did, for
  -- the keys that read analytics.
  WITH compared AS (
    SELECT coalesce(a.job_id, b.key::uuid) AS job_id, a.shown IS DISTINCT FROM b.value ->> 0 AS shown, a.figures IS DISTINCT FROM b.value ->> 1 AS figures
    FROM job_figures(job_ids) a FULL JOIN jsonb_each(figures_before) b ON b.key::uuid = a.job_id
  )
  SELECT array_agg(c.job_id) FILTER (WHERE c.shown), array_agg(c.job_id) FILTER (WHERE c.figures AND NOT c.shown)
  INTO shown_changed, analytics_changed FROM compared c;
  PERFORM log_job_changes_later(coalesce(shown_changed, '{}'));
  PERFORM log_job_changes_later(coalesce(analytics_changed, '{}'), true);
END
$function$;

CREATE OR REPLACE FUNCTION public.screens_maintain_summaries()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  -- No fold in between: one could add rows this would not see.
  PERFORM pg_advisory_xact_lock(8146720561340517);
  PERFORM organization_screen_stats_truncated();
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
$function$;

COMMENT ON FUNCTION organization_screen_stats_rebuilt(uuid[]) IS 'Summaries: counts a rebuild of job_ids (all when null) in their organizations'' versions: the deltas it drops, and one change more. Called by rebuild_screen_summaries.';
COMMENT ON FUNCTION organization_screen_stats_truncated() IS 'Summaries: counts a TRUNCATE of screens in every organization''s version: the deltas it drops, and one change more. Called by screens_maintain_summaries.';
COMMENT ON FUNCTION fold_screen_summary_deltas(integer) IS 'Summaries: moves up to max_deltas deltas into job_screen_stats, job_completion_segments, job_completion_boundaries and organization_screen_stats, and the pending job changes into the sync log; one caller at a time (advisory lock). Called by every instance each second (src/db/summary-fold.ts) and by npm run admin -- fold-stats.';
