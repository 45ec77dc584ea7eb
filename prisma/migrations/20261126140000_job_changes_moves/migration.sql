-- A change logged under the organization its job has when it commits (issue 35, part 1).
--
-- Questions' triggers (and the TRUNCATE trigger of screens and questions) read their jobs'
-- organization in the writer's transaction. A move (`UPDATE jobs SET organization_id …`)
-- takes FOR NO KEY UPDATE on the job's row, which neither a question's foreign key check (FOR
-- KEY SHARE) nor a question's deletion (no lock on the job) conflicts with: the move could
-- commit between the trigger's read and the write's commit, and the write stayed logged under
-- the organization the job had left. A partner of the other organization that walked in
-- between (the move visible, the write not) never had it reported (reproduced in
-- test/sync/move-race.test.ts).
--
-- Now they read the organization FOR SHARE, which conflicts with the move's lock: a move in
-- progress makes the write wait until it commits, and READ COMMITTED then re-reads the moved
-- row (the write is logged under the new organization); a move that comes after waits until
-- the write commits, so every snapshot that sees the move sees the write. Either way the write
-- is logged under the organization the job has when the write commits. (REPEATABLE READ and
-- SERIALIZABLE writers get a serialization failure instead of a stale read.) What it costs and
-- what else was weighed: docs/sync-design.md, "Moves".
--
-- Screens need no lock: their deltas are logged by whoever deletes them (the fold, mostly),
-- under the job's organization then, with the delta's own transaction, which committed before
-- that read; a move the read did not see commits after it, so every snapshot that sees the move
-- sees the delta's transaction too. Except deltas of the deleting transaction itself (a
-- TRUNCATE or a rebuild after its own screen writes): those are locked like a question's.
--
-- Every function and trigger as the migrations leave them: prisma/current-functions.sql.

-- Logs `job_ids` (every job when null) in this transaction, each under its organization read
-- FOR SHARE, in id order (two such statements lock common jobs in the same order). A job
-- deleted meanwhile is not logged: its deletion was.
CREATE FUNCTION log_job_changes_locked(job_ids uuid[]) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH locked AS (
    SELECT id, organization_id FROM jobs WHERE job_ids IS NULL OR id = ANY (job_ids) ORDER BY id FOR SHARE
  )
  INSERT INTO job_changes (organization_id, job_id) SELECT organization_id, id FROM locked
  ON CONFLICT DO NOTHING
$$;
REVOKE EXECUTE ON FUNCTION log_job_changes_locked(uuid[]) FROM PUBLIC;

CREATE OR REPLACE FUNCTION questions_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM log_job_changes_locked(ARRAY(SELECT DISTINCT job_id FROM new_questions));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM log_job_changes_locked(ARRAY(SELECT DISTINCT job_id FROM old_questions));
  ELSE
    PERFORM log_job_changes_locked(ARRAY(SELECT job_id FROM old_questions UNION SELECT job_id FROM new_questions));
  END IF;
  RETURN NULL;
END
$$;

-- TRUNCATE of screens or questions: every job, locked.
CREATE OR REPLACE FUNCTION truncate_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  PERFORM log_job_changes_locked(NULL);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION screen_summary_deltas_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  me xid8 := pg_current_xact_id();
BEGIN
  -- Other transactions' deltas: committed before this statement read them. Under the job's
  -- organization now, without a lock: a move this read does not see commits after the delta's
  -- transaction did.
  INSERT INTO job_changes (organization_id, xid, job_id)
  SELECT DISTINCT j.organization_id, d.xid, d.job_id
  FROM gone_deltas d JOIN jobs j ON j.id = d.job_id
  WHERE d.xid <> me
  ON CONFLICT DO NOTHING;
  -- This transaction's own (not committed: nothing orders a move after it), locked.
  IF EXISTS (SELECT FROM gone_deltas WHERE xid = me) THEN
    PERFORM log_job_changes_locked(ARRAY(SELECT DISTINCT job_id FROM gone_deltas WHERE xid = me));
  END IF;
  RETURN NULL;
END
$$;

-- What a job's figures are, as the summaries and their unfolded deltas hold them: the per-job
-- counts and every completion bucket that is not zero, as text (numeric sums without trailing
-- zeros, which additions may leave). Equal texts, equal figures: what a rebuild compares to
-- know which jobs it changed.
CREATE FUNCTION job_figures(job_ids uuid[] DEFAULT NULL) RETURNS TABLE (job_id uuid, figures text)
LANGUAGE sql STABLE AS $$
  SELECT coalesce(s.job_id, b.job_id), coalesce(s.counts, '') || '|' || coalesce(b.buckets, '')
  FROM (SELECT job_id, in_progress || ':' || completed || ':' || expired || ':' || scored || ':' || trim_scale(score_sum) AS counts
        FROM stored_job_screen_stats(job_ids)
        WHERE in_progress <> 0 OR completed <> 0 OR expired <> 0 OR scored <> 0 OR score_sum <> 0) s
  FULL JOIN (SELECT job_id, string_agg(bucket || kind || ':' || completed || ':' || scored || ':' || trim_scale(score_sum), ',' ORDER BY bucket, kind) AS buckets
             FROM stored_job_completion_buckets(job_ids)
             WHERE completed <> 0 OR scored <> 0 OR score_sum <> 0
             GROUP BY job_id) b ON b.job_id = s.job_id
$$;

-- A rebuild (after a load with the triggers off, a restore, a repair by hand) logs the jobs
-- whose figures it changed, locked like a question's write: their partners' next sync
-- reports them. What it rebuilds is unchanged (migration 20261123232000's definition, in
-- plpgsql to keep the figures from before).
CREATE OR REPLACE FUNCTION rebuild_screen_summaries(job_ids uuid[] DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  figures_before jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(8146720561340517);
  -- Its statements read in several snapshots: no write may fall between them.
  LOCK TABLE screens IN SHARE MODE;
  SELECT coalesce(jsonb_object_agg(f.job_id, f.figures), '{}') INTO figures_before FROM job_figures(job_ids) f;
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
  PERFORM log_job_changes_locked(ARRAY(
    SELECT coalesce(a.job_id, b.key::uuid)
    FROM job_figures(job_ids) a FULL JOIN jsonb_each_text(figures_before) b ON b.key::uuid = a.job_id
    WHERE a.figures IS DISTINCT FROM b.value));
END
$$;
