-- Incremental sync (issue 24): a log of which jobs changed, in which transaction, so that
-- `GET /api/jobs?changed_since=<sync_token>` finds the jobs changed after a token's point at
-- a cost that grows with the changes, not with the jobs or screens. docs/sync-design.md has
-- the argument; this file the definitions.
--
-- A token's point is a snapshot (pg_current_snapshot()), not a time: transactions commit out
-- of order, and a change committed after a reader's point may carry an earlier clock or id
-- than one committed before it. A change is "after the token" when its transaction is not
-- visible in the token's snapshot (pg_visible_in_snapshot), which is exactly what the reader
-- that made the token could not see.

-- (organization, transaction, job): one row per job a transaction changed, under the
-- organization that owns the job (both organizations when a job moves). `collapsed`: the
-- row stands for every change of the job up to its xid (prune_job_changes below), so that a
-- busy job keeps one row, not one per writer transaction.
CREATE TABLE "job_changes" (
    "organization_id" UUID NOT NULL,
    "xid" xid8 NOT NULL DEFAULT pg_current_xact_id(),
    "job_id" UUID NOT NULL,
    "logged_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    "collapsed" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "job_changes_pkey" PRIMARY KEY ("organization_id", "xid", "job_id")
);
CREATE INDEX "job_changes_logged_at_idx" ON "job_changes" ("logged_at");

-- What a token must agree with to be answered (else 410 sync_token_expired):
-- `pruned_through`, the largest transaction id whose rows the retention removed: a token
-- whose snapshot might not see it (its xmin is not above it) can no longer be answered
-- exactly. It starts at this migration's transaction: a walk begun before the log existed
-- cannot make a usable token. `generation`, a random number that every token carries:
-- expire_sync_tokens() (after a restore or a lossy failover) and a TRUNCATE of jobs change it,
-- so that every token made before answers 410, whatever its transaction ids say (a database
-- that went back in time hands the same ids out again).
CREATE TABLE "job_changes_horizon" (
    "only_row" BOOLEAN NOT NULL DEFAULT true,
    "pruned_through" xid8 NOT NULL DEFAULT '0',
    "generation" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "job_changes_horizon_pkey" PRIMARY KEY ("only_row"),
    CONSTRAINT "job_changes_horizon_only_row" CHECK ("only_row")
);
INSERT INTO job_changes_horizon (pruned_through, generation) VALUES (pg_current_xact_id(), floor(random() * 2147483647)::int);

-- A new generation, never the current one. SECURITY DEFINER: a TRUNCATE's trigger runs it as
-- whoever truncates.
CREATE FUNCTION expire_sync_tokens() RETURNS int
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
  UPDATE job_changes_horizon SET generation = ((generation::bigint + 1 + floor(random() * 2147483646)::bigint) % 2147483647)::int
  RETURNING generation
$$;
REVOKE EXECUTE ON FUNCTION expire_sync_tokens() FROM PUBLIC;

-- Screens' changes travel with the summaries' deltas, which writers append already: each
-- delta now carries its writer's transaction (a column default: no more work for a writer
-- than computing it once per row appended), and when the fold (or anything else) deletes
-- deltas, their jobs are logged here with those transactions. Readers of the log read the
-- unfolded deltas too; the fold moves a delta from one table to the other in one commit.
-- Existing deltas get this migration's transaction: later than their own, so reported, not
-- missed.
ALTER TABLE "screen_summary_deltas" ADD COLUMN "xid" xid8 NOT NULL DEFAULT pg_current_xact_id();

-- Logged under the job's current organization (a delta has no organization); a delta of a
-- job that no longer exists is not: the job's deletion logged it.
CREATE FUNCTION screen_summary_deltas_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO job_changes (organization_id, xid, job_id)
  SELECT DISTINCT j.organization_id, d.xid, d.job_id
  FROM gone_deltas d JOIN jobs j ON j.id = d.job_id
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER screen_summary_deltas_log_changes
  AFTER DELETE ON screen_summary_deltas REFERENCING OLD TABLE AS gone_deltas
  FOR EACH STATEMENT EXECUTE FUNCTION screen_summary_deltas_log_changes();

-- Jobs: created, changed (under the old organization and the new one), deleted.
CREATE FUNCTION jobs_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO job_changes (organization_id, job_id) SELECT DISTINCT organization_id, id FROM new_jobs ON CONFLICT DO NOTHING;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO job_changes (organization_id, job_id) SELECT DISTINCT organization_id, id FROM old_jobs ON CONFLICT DO NOTHING;
  ELSE
    INSERT INTO job_changes (organization_id, job_id)
    SELECT organization_id, id FROM old_jobs UNION SELECT organization_id, id FROM new_jobs
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER jobs_log_changes_insert AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION jobs_log_changes();
CREATE TRIGGER jobs_log_changes_update AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION jobs_log_changes();
CREATE TRIGGER jobs_log_changes_delete AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION jobs_log_changes();

-- Questions change a job's question count: their jobs, before and after. The questions a
-- job's deletion cascades to find no job, and log nothing: the deletion did.
CREATE FUNCTION questions_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO job_changes (organization_id, job_id)
    SELECT DISTINCT j.organization_id, j.id FROM jobs j WHERE j.id IN (SELECT job_id FROM new_questions) ON CONFLICT DO NOTHING;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO job_changes (organization_id, job_id)
    SELECT DISTINCT j.organization_id, j.id FROM jobs j WHERE j.id IN (SELECT job_id FROM old_questions) ON CONFLICT DO NOTHING;
  ELSE
    INSERT INTO job_changes (organization_id, job_id)
    SELECT DISTINCT j.organization_id, j.id FROM jobs j
    WHERE j.id IN (SELECT job_id FROM old_questions UNION SELECT job_id FROM new_questions)
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER questions_log_changes_insert AFTER INSERT ON questions REFERENCING NEW TABLE AS new_questions
  FOR EACH STATEMENT EXECUTE FUNCTION questions_log_changes();
CREATE TRIGGER questions_log_changes_update AFTER UPDATE ON questions REFERENCING OLD TABLE AS old_questions NEW TABLE AS new_questions
  FOR EACH STATEMENT EXECUTE FUNCTION questions_log_changes();
CREATE TRIGGER questions_log_changes_delete AFTER DELETE ON questions REFERENCING OLD TABLE AS old_questions
  FOR EACH STATEMENT EXECUTE FUNCTION questions_log_changes();

-- TRUNCATE of screens (or questions) fires no transition trigger: every job is logged.
CREATE FUNCTION truncate_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO job_changes (organization_id, job_id) SELECT organization_id, id FROM jobs ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
CREATE TRIGGER screens_log_truncate AFTER TRUNCATE ON screens FOR EACH STATEMENT EXECUTE FUNCTION truncate_log_changes();
CREATE TRIGGER questions_log_truncate AFTER TRUNCATE ON questions FOR EACH STATEMENT EXECUTE FUNCTION truncate_log_changes();

-- TRUNCATE of jobs (itself, or cascaded from organizations or users) leaves no job to log:
-- every token expires, and partners walk again.
CREATE FUNCTION jobs_truncated_expire_sync_tokens() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  PERFORM expire_sync_tokens();
  RETURN NULL;
END
$$;
CREATE TRIGGER jobs_truncate_expire_sync_tokens AFTER TRUNCATE ON jobs FOR EACH STATEMENT EXECUTE FUNCTION jobs_truncated_expire_sync_tokens();

-- Upkeep, on a timer of the API (SYNC_RETENTION_HOURS), one caller at a time:
-- 1. Rows logged before the retention go; the horizon keeps the largest transaction removed.
-- 2. A job's rows whose transactions are all finished (below every running snapshot's xmin)
--    collapse into its latest one, marked `collapsed`. A reader then reports the job for any
--    token whose xmin is not above that xid: an earlier transaction of the job, now folded
--    into the row, may have been in progress in the token's snapshot. Conservative: a job
--    may be reported once more, never missed.
-- Not while the fold runs (its lock, tried: neither waits for the other): the fold logs a
-- screen's change with its writer's old transaction, and its insert would wait for a
-- collapse holding the same row. The retention is at least an hour, whoever calls: the API's
-- role may run this, and must not be able to empty the log (every token would expire).
-- Returns the rows removed. SECURITY DEFINER: the API's role may only read the log.
CREATE FUNCTION prune_job_changes(retention_seconds int, max_jobs int DEFAULT 10000) RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  expired xid8;
  expired_rows int;
  collapsed_rows int;
BEGIN
  IF NOT pg_try_advisory_xact_lock(8146720561340518) THEN RETURN 0; END IF;
  IF NOT pg_try_advisory_xact_lock(8146720561340517) THEN RETURN 0; END IF;
  WITH gone AS (
    DELETE FROM job_changes WHERE logged_at < now() - make_interval(secs => greatest(retention_seconds, 3600)) RETURNING xid
  )
  SELECT max(xid), count(*) INTO expired, expired_rows FROM gone;
  IF expired IS NOT NULL THEN
    UPDATE job_changes_horizon SET pruned_through = greatest(pruned_through, expired);
  END IF;

  WITH finished AS (
    SELECT organization_id, job_id, max(xid) AS latest
    FROM job_changes
    WHERE xid < pg_snapshot_xmin(pg_current_snapshot())
    GROUP BY organization_id, job_id
    HAVING count(*) > 1
    LIMIT greatest(max_jobs, 1)
  ), folded AS (
    DELETE FROM job_changes c USING finished f
    WHERE c.organization_id = f.organization_id AND c.job_id = f.job_id AND c.xid < f.latest
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

-- The roles that read the summaries (the API's, prisma/sql/api-role.sql) read the log and may
-- prune it.
REVOKE EXECUTE ON FUNCTION prune_job_changes(int, int) FROM PUBLIC;
DO $$
DECLARE reader record;
BEGIN
  FOR reader IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
                WHERE table_name = 'job_completion_segments' AND privilege_type = 'SELECT' AND grantee <> current_user LOOP
    EXECUTE 'GRANT SELECT ON job_changes, job_changes_horizon TO '
      || CASE WHEN reader.grantee = 'PUBLIC' THEN 'PUBLIC' ELSE quote_ident(reader.grantee) END;
    IF reader.grantee <> 'PUBLIC' THEN
      EXECUTE 'GRANT EXECUTE ON FUNCTION prune_job_changes(int, int) TO ' || quote_ident(reader.grantee);
    END IF;
  END LOOP;
END
$$;
