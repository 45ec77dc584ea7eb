-- Sync tells a key only what it may read (issue 35, part 5). A change of a job's analytics
-- alone (a screen's status without its score, a completion moved to another week) changes
-- nothing a job's item shows (its fields, question count, interview count, average score).
-- It was reported to every key, so a key without `analytics:read`, or a free organization's,
-- learned that a job's analytics changed when nothing it can read did. The log now says which
-- changes are of analytics alone (`analytics_only`), and a sync for a key that cannot read
-- analytics skips them (src/jobs/repository.ts, syncPage; docs/sync-design.md, "What each key
-- is told").
--
-- Which: a transaction's deltas of a job whose sums of interviews (in progress, completed,
-- expired), of scored screens and of scores are all zero: the item's figures are those sums,
-- so they did not move. Judged on what one fold (or the unfolded deltas a sync reads) holds of
-- the transaction: a part that nets to zero while the whole does not is impossible the other
-- way round (a whole that moved has a part that moved), so a change is at worst reported to a
-- key that need not see it, never hidden from one that must. Everything else the log records
-- (jobs, questions, TRUNCATE, a transaction's own deltas) counts for every key; a rebuild and
-- verify-stats --fix say which they changed.
--
-- Every function and trigger as the migrations leave them: prisma/current-functions.sql.

ALTER TABLE "job_changes" ADD COLUMN "analytics_only" BOOLEAN NOT NULL DEFAULT false;
-- What a sync for a key without analytics reads, in the log's order (as the primary key serves
-- the others): the changes that are not of analytics alone, so that its page does not read
-- past those it skips. Building it holds off writes to the log for one read of it, as
-- 20261126140100's did.
CREATE INDEX "job_changes_shown_idx" ON "job_changes" ("organization_id", "xid", "job_id") WHERE NOT "analytics_only";

-- A second argument: whether the jobs' change is of their analytics alone.
DROP FUNCTION log_job_changes_locked(uuid[]);
CREATE FUNCTION log_job_changes_locked(job_ids uuid[], analytics_only boolean DEFAULT false) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH locked AS (
    SELECT id, organization_id FROM jobs WHERE job_ids IS NULL OR id = ANY (job_ids) ORDER BY id FOR SHARE
  )
  INSERT INTO job_changes AS c (organization_id, job_id, analytics_only) SELECT organization_id, id, log_job_changes_locked.analytics_only FROM locked
  ON CONFLICT (organization_id, xid, job_id) DO UPDATE SET analytics_only = c.analytics_only AND excluded.analytics_only
$$;
REVOKE EXECUTE ON FUNCTION log_job_changes_locked(uuid[], boolean) FROM PUBLIC;

-- A change already logged for every key stays so; one of analytics alone becomes one for every
-- key when the same transaction also changed what the item shows.
CREATE OR REPLACE FUNCTION screen_summary_deltas_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  me xid8 := pg_current_xact_id();
BEGIN
  -- Other transactions' deltas: committed before this statement read them. Under the job's
  -- organization now, without a lock: a move this read does not see commits after the delta's
  -- transaction did.
  INSERT INTO job_changes AS c (organization_id, xid, job_id, analytics_only)
  SELECT j.organization_id, d.xid, d.job_id,
         sum(d.in_progress + d.completed + d.expired) = 0 AND sum(d.scored) = 0 AND sum(d.score_sum) = 0
  FROM gone_deltas d JOIN jobs j ON j.id = d.job_id
  WHERE d.xid <> me
  GROUP BY j.organization_id, d.xid, d.job_id
  ON CONFLICT (organization_id, xid, job_id) DO UPDATE SET analytics_only = c.analytics_only AND excluded.analytics_only;
  -- This transaction's own (not committed: nothing orders a move after it), locked.
  IF EXISTS (SELECT FROM gone_deltas WHERE xid = me) THEN
    PERFORM log_job_changes_locked(ARRAY(SELECT DISTINCT job_id FROM gone_deltas WHERE xid = me));
  END IF;
  RETURN NULL;
END
$$;

-- What a job shows of its screens (its interviews, scored screens and scores), and all its
-- figures, as text (migration 20261126140000's job_figures, plus `shown`).
DROP FUNCTION job_figures(uuid[]);
CREATE FUNCTION job_figures(job_ids uuid[] DEFAULT NULL) RETURNS TABLE (job_id uuid, shown text, figures text)
LANGUAGE sql STABLE AS $$
  SELECT coalesce(s.job_id, b.job_id), coalesce(s.shown, ''), coalesce(s.counts, '') || '|' || coalesce(b.buckets, '')
  FROM (SELECT job_id, (in_progress + completed + expired) || ':' || scored || ':' || trim_scale(score_sum) AS shown,
               in_progress || ':' || completed || ':' || expired || ':' || scored || ':' || trim_scale(score_sum) AS counts
        FROM stored_job_screen_stats(job_ids)
        WHERE in_progress <> 0 OR completed <> 0 OR expired <> 0 OR scored <> 0 OR score_sum <> 0) s
  FULL JOIN (SELECT job_id, string_agg(bucket || kind || ':' || completed || ':' || scored || ':' || trim_scale(score_sum), ',' ORDER BY bucket, kind) AS buckets
             FROM stored_job_completion_buckets(job_ids)
             WHERE completed <> 0 OR scored <> 0 OR score_sum <> 0
             GROUP BY job_id) b ON b.job_id = s.job_id
$$;

CREATE OR REPLACE FUNCTION rebuild_screen_summaries(job_ids uuid[] DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  figures_before jsonb;
  shown_changed uuid[];
  analytics_changed uuid[];
BEGIN
  PERFORM pg_advisory_xact_lock(8146720561340517);
  -- Its statements read in several snapshots: no write may fall between them.
  LOCK TABLE screens IN SHARE MODE;
  SELECT coalesce(jsonb_object_agg(f.job_id, jsonb_build_array(f.shown, f.figures)), '{}') INTO figures_before FROM job_figures(job_ids) f;
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
  PERFORM log_job_changes_locked(coalesce(shown_changed, '{}'));
  PERFORM log_job_changes_locked(coalesce(analytics_changed, '{}'), true);
END
$$;

-- The collapse keeps two rows of a job at most: its latest change of analytics alone, standing
-- for every earlier one, and its latest other change, standing for every earlier other one.
-- One row for both would be a change for every key, and would tell a key without analytics,
-- after each collapse, of the changes of analytics alone it was spared.
CREATE OR REPLACE FUNCTION prune_job_changes(retention_seconds int, max_jobs int DEFAULT 10000) RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  expired xid8;
  expired_rows int;
  collapsed_rows int;
BEGIN
  IF NOT pg_try_advisory_xact_lock(8146720561340518) THEN RETURN 0; END IF;
  IF NOT pg_try_advisory_xact_lock(8146720561340517) THEN RETURN 0; END IF;
  IF adopt_database_history() THEN RETURN 0; END IF;
  WITH gone AS (
    DELETE FROM job_changes WHERE logged_at < now() - make_interval(secs => greatest(retention_seconds, 3600)) RETURNING xid
  )
  SELECT max(xid), count(*) INTO expired, expired_rows FROM gone;
  IF expired IS NOT NULL THEN
    UPDATE job_changes_horizon SET pruned_through = greatest(pruned_through, expired);
  END IF;

  WITH finished AS (
    SELECT organization_id, job_id, analytics_only, max(xid) AS latest
    FROM job_changes
    WHERE xid < pg_snapshot_xmin(pg_current_snapshot())
    GROUP BY organization_id, job_id, analytics_only
    HAVING count(*) > 1
    LIMIT greatest(max_jobs, 1)
  ), folded AS (
    DELETE FROM job_changes c USING finished f
    WHERE c.organization_id = f.organization_id AND c.job_id = f.job_id AND c.analytics_only = f.analytics_only AND c.xid < f.latest
    RETURNING 1
  ), marked AS (
    UPDATE job_changes c SET collapsed = true FROM finished f
    WHERE c.organization_id = f.organization_id AND c.job_id = f.job_id AND c.xid = f.latest
    RETURNING 1
  )
  SELECT count(*) INTO collapsed_rows FROM folded;
  RETURN expired_rows + collapsed_rows;
END
$$;
