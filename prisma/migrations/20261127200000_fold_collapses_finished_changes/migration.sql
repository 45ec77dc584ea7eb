-- The fold costs the writers' cores less (issue 42, part 4). Measured with pgbench on this
-- machine (2 writers, synchronous_commit off, so that CPU is what is measured): single-row
-- screen writes with the deltas' trigger run at 0.93-0.96 of the floor hook's, with the fold
-- running every second 0.75-0.82. The fold was the gap; per 10,000 deltas of 100 jobs it took
-- about 310 ms, now about 200.
--
-- 1. The log: a job's finished screen writes become one collapsed row. The fold logged a row
--    per writer transaction: a busy job's thousand writes a second cost a thousand rows of
--    the log and their index entries, until the upkeep collapsed them a minute later. Now the
--    deltas of transactions below the oldest one still running (the upkeep's rule, applied
--    as the rows arrive) become one row of each kind per job, at their latest transaction,
--    marked `collapsed`; the others keep a row each. A collapsed row is reported to any token
--    whose xmin is not above it, so every transaction in it is reported to a token that had
--    not seen it (docs/sync-design.md, "Screens: logged by the fold").
-- 2. The fold: the deltas it moves are found without joining them back to a list of
--    themselves; a place is computed per bucket, not per delta; and a boundary window's running
--    totals are brought up to date from its row and this fold's quarter hours, window by
--    window, instead of unnesting every window into one sort and hash of all their quarters.
CREATE OR REPLACE FUNCTION public.screen_summary_deltas_log_changes()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  me xid8 := pg_current_xact_id();
  finished xid8 := pg_snapshot_xmin(pg_current_snapshot());
BEGIN
  -- Other transactions' deltas: committed before this statement read them. Under the job's
  -- organization now, without a lock: a move this read does not see commits after the delta's
  -- transaction did. Each kind's transactions below `finished` as one row (none of them can
  -- be in progress in a snapshot taken from now on); the others as they are.
  INSERT INTO job_changes AS c (organization_id, xid, job_id, analytics_only, collapsed)
  SELECT organization_id, max(xid), job_id, analytics_only, count(*) > 1
  FROM (
    SELECT j.organization_id, d.xid, d.job_id,
           sum(d.in_progress + d.completed + d.expired) = 0 AND sum(d.scored) = 0 AND sum(d.score_sum) = 0 AS analytics_only
    FROM gone_deltas d JOIN jobs j ON j.id = d.job_id
    WHERE d.xid <> me
    GROUP BY j.organization_id, d.xid, d.job_id
  ) t
  GROUP BY organization_id, job_id, analytics_only, CASE WHEN xid >= finished THEN xid END
  ON CONFLICT (organization_id, xid, job_id) DO UPDATE
    SET analytics_only = c.analytics_only AND excluded.analytics_only, collapsed = c.collapsed OR excluded.collapsed;
  -- This transaction's own (not committed: nothing orders a move after it): for the fold to
  -- log once it has committed, as a question's write.
  IF EXISTS (SELECT FROM gone_deltas WHERE xid = me) THEN
    PERFORM log_job_changes_later(ARRAY(SELECT DISTINCT job_id FROM gone_deltas WHERE xid = me));
  END IF;
  RETURN NULL;
END
$function$;

COMMENT ON FUNCTION screen_summary_deltas_log_changes() IS 'Sync log: logs the jobs of deleted deltas (folded, or dropped with their job) with their writers'' transactions, those below the oldest running one as one collapsed row per job and kind; a transaction''s own are left pending. Trigger of screen_summary_deltas.';

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
