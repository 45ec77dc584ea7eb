-- Writers pay nothing for sync: no lock, no wait, no deadlock (issue 40, part 1).
--
-- Since 20261126140000_job_changes_moves, a question's write (and a TRUNCATE of screens or
-- questions, a rebuild, verify-stats --fix, a transaction deleting its own deltas) logged its
-- jobs under their organization read FOR SHARE, held to its commit, so that a move of the job
-- could not commit in between. FOR SHARE conflicts with every UPDATE of the job, not only a
-- move: two interleaved form saves (a question, then the job's row) deadlocked, 5 rounds out of
-- 5, and a job update waited for any open question write of its job
-- (test/jobs/sync/writers.test.ts).
--
-- Now those writers append (job, their transaction) to job_changes_pending, with no lock and
-- no organization, as screen writers append deltas. A sync reads the pending rows with the
-- unfolded deltas, each joined to its job's organization in the sync's own snapshot; the fold
-- (every second) deletes them, and their trigger logs each under the organization it reads
-- then, with the row's own transaction, which committed before that read: a move the read does
-- not see commits after it, so every snapshot that sees the move sees the write. The argument
-- is the deltas' (docs/sync-design.md, "Moves"); the lock matrix is in the same page.
--
-- And every way the log or the deltas can lose rows now expires sync tokens (part 4): a
-- TRUNCATE of job_changes, screen_summary_deltas or job_changes_pending (no row trigger
-- fires), a DELETE from job_changes other than the upkeep's, and an UPDATE of the columns that
-- place a row (organization, transaction, job).
--
-- Every function and trigger as the migrations leave them: prisma/current-functions.sql.

-- No index, no key: a writer's append is one heap tuple. The fold and syncs read it whole
-- (a second's worth of question writes).
CREATE TABLE job_changes_pending (
  job_id uuid NOT NULL,
  xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  analytics_only boolean NOT NULL DEFAULT false
);

-- Logs `job_ids` (every job when null) in this transaction, for the fold to file under the
-- organization each job has once this transaction has committed.
CREATE FUNCTION log_job_changes_later(job_ids uuid[], analytics_only boolean DEFAULT false) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
  INSERT INTO job_changes_pending (job_id, analytics_only)
  SELECT j, log_job_changes_later.analytics_only FROM unnest(job_ids) j WHERE job_ids IS NOT NULL
  UNION ALL
  SELECT id, log_job_changes_later.analytics_only FROM jobs WHERE job_ids IS NULL
$$;
REVOKE EXECUTE ON FUNCTION log_job_changes_later(uuid[], boolean) FROM PUBLIC;

-- Pending changes deleted (by the fold): logged under the job's organization now, with their
-- own transaction, which committed before this statement read them. A job gone since is not
-- logged (its deletion was, after the write: the deletion waited for it). A transaction's own
-- pending rows (not committed) go back to wait for the next fold.
CREATE FUNCTION job_changes_pending_log() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  me xid8 := pg_current_xact_id();
BEGIN
  INSERT INTO job_changes AS c (organization_id, xid, job_id, analytics_only)
  SELECT j.organization_id, p.xid, p.job_id, bool_and(p.analytics_only)
  FROM gone_pending p JOIN jobs j ON j.id = p.job_id
  WHERE p.xid <> me
  GROUP BY j.organization_id, p.xid, p.job_id
  ON CONFLICT (organization_id, xid, job_id) DO UPDATE SET analytics_only = false
    WHERE c.analytics_only AND NOT excluded.analytics_only;
  INSERT INTO job_changes_pending (job_id, analytics_only) SELECT job_id, analytics_only FROM gone_pending WHERE xid = me;
  RETURN NULL;
END
$$;
CREATE TRIGGER job_changes_pending_log AFTER DELETE ON job_changes_pending REFERENCING OLD TABLE AS gone_pending
  FOR EACH STATEMENT EXECUTE FUNCTION job_changes_pending_log();

CREATE OR REPLACE FUNCTION questions_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM log_job_changes_later(ARRAY(SELECT DISTINCT job_id FROM new_questions));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM log_job_changes_later(ARRAY(SELECT DISTINCT job_id FROM old_questions));
  ELSE
    PERFORM log_job_changes_later(ARRAY(SELECT job_id FROM old_questions UNION SELECT job_id FROM new_questions));
  END IF;
  RETURN NULL;
END
$$;

-- TRUNCATE of screens or questions: every job.
CREATE OR REPLACE FUNCTION truncate_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  PERFORM log_job_changes_later(NULL);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION public.screen_summary_deltas_log_changes()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
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
  -- This transaction's own (not committed: nothing orders a move after it): for the fold to
  -- log once it has committed, as a question's write.
  IF EXISTS (SELECT FROM gone_deltas WHERE xid = me) THEN
    PERFORM log_job_changes_later(ARRAY(SELECT DISTINCT job_id FROM gone_deltas WHERE xid = me));
  END IF;
  RETURN NULL;
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
$function$;

DROP FUNCTION log_job_changes_locked(uuid[], boolean);

-- Rows of the log, its pending part or the deltas lost or moved by hand: no token can tell
-- what they held, so every token made before answers 410 and partners walk again. The
-- upkeep's deletes (retention, collapsing, a copied log started over) run with
-- screening.change_log_upkeep on, set by their functions alone.
CREATE FUNCTION change_log_lost() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('screening.change_log_upkeep', true) = 'on' THEN RETURN NULL; END IF;
  PERFORM expire_sync_tokens();
  RETURN NULL;
END
$$;
ALTER FUNCTION prune_job_changes(integer, integer) SET screening.change_log_upkeep = 'on';
ALTER FUNCTION adopt_database_history() SET screening.change_log_upkeep = 'on';
CREATE TRIGGER job_changes_truncate_expire_sync_tokens AFTER TRUNCATE ON job_changes FOR EACH STATEMENT EXECUTE FUNCTION change_log_lost();
CREATE TRIGGER job_changes_delete_expire_sync_tokens AFTER DELETE ON job_changes FOR EACH STATEMENT EXECUTE FUNCTION change_log_lost();
CREATE TRIGGER job_changes_moved_expire_sync_tokens AFTER UPDATE OF organization_id, xid, job_id ON job_changes FOR EACH STATEMENT EXECUTE FUNCTION change_log_lost();
CREATE TRIGGER job_changes_pending_truncate_expire_sync_tokens AFTER TRUNCATE ON job_changes_pending FOR EACH STATEMENT EXECUTE FUNCTION change_log_lost();
CREATE TRIGGER job_changes_pending_moved_expire_sync_tokens AFTER UPDATE OF xid, job_id ON job_changes_pending FOR EACH STATEMENT EXECUTE FUNCTION change_log_lost();
CREATE TRIGGER screen_summary_deltas_truncate_expire_sync_tokens AFTER TRUNCATE ON screen_summary_deltas FOR EACH STATEMENT EXECUTE FUNCTION change_log_lost();
CREATE TRIGGER screen_summary_deltas_moved_expire_sync_tokens AFTER UPDATE OF xid, job_id ON screen_summary_deltas FOR EACH STATEMENT EXECUTE FUNCTION change_log_lost();
-- TRUNCATE of jobs: the same function (it was jobs_truncated_expire_sync_tokens).
DROP TRIGGER jobs_truncate_expire_sync_tokens ON jobs;
DROP FUNCTION jobs_truncated_expire_sync_tokens();
CREATE TRIGGER jobs_truncate_expire_sync_tokens AFTER TRUNCATE ON jobs FOR EACH STATEMENT EXECUTE FUNCTION change_log_lost();

-- The roles that read the log read its pending part too (prisma/sql/api-role.sql grants it
-- from now on).
DO $$
DECLARE
  r text;
BEGIN
  FOR r IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
           WHERE table_schema = 'public' AND table_name = 'job_changes' AND privilege_type = 'SELECT' AND grantee <> current_user
  LOOP
    EXECUTE format('GRANT SELECT ON job_changes_pending TO %I', r);
  END LOOP;
END
$$;
