-- A job's write is a change for every key, whatever logged its job in the same transaction
-- first. The log holds one row per (organization, transaction, job); jobs_log_changes kept an
-- existing row as it was (ON CONFLICT DO NOTHING), so a transaction that first changed a job's
-- analytics alone (a rebuild, verify-stats --fix: a row marked analytics_only) and then the
-- job's title left the row marked, and a key without analytics:read never heard of the new
-- title (found in review; test/jobs/sync/sync.test.ts, "a transaction that changes a job's
-- analytics alone, then its fields"). Now its insert clears the mark, as the other writers'
-- `analytics_only AND excluded.analytics_only` does (only where it is set: a job written again
-- in its transaction writes no new row version).
--
-- Every function and trigger as the migrations leave them: prisma/current-functions.sql.

CREATE OR REPLACE FUNCTION jobs_log_changes() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO job_changes (organization_id, job_id) SELECT DISTINCT organization_id, id FROM new_jobs
    ON CONFLICT (organization_id, xid, job_id) DO UPDATE SET analytics_only = false WHERE job_changes.analytics_only;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO job_changes (organization_id, job_id) SELECT DISTINCT organization_id, id FROM old_jobs
    ON CONFLICT (organization_id, xid, job_id) DO UPDATE SET analytics_only = false WHERE job_changes.analytics_only;
  ELSE
    INSERT INTO job_changes (organization_id, job_id)
    SELECT organization_id, id FROM old_jobs UNION SELECT organization_id, id FROM new_jobs
    ON CONFLICT (organization_id, xid, job_id) DO UPDATE SET analytics_only = false WHERE job_changes.analytics_only;
  END IF;
  RETURN NULL;
END
$$;
