-- Sync tokens name the database history they were made on (issue 35, part 2).
--
-- The token's check (`job_changes_horizon.generation`) is data: a pg_dump travels with it, so
-- a token made before the dump passed it on the restored copy, whose transaction ids are
-- another history's (a fresh cluster's start from a few hundred), and missed every change made
-- there (reproduced in test/sync/restore.test.ts: 200, no job, a fresh token). A token now
-- carries a hash of database_history(), which a copy in another cluster or another database
-- does not share, and a sync page compares it with the server's (src/sync/pages.ts).
--
-- The log itself came with the copy too: its rows' transaction ids and `pruned_through` are
-- the old history's, meaningless here (ids above the copy's make every token made there look
-- pruned). The horizon now records the history its log was written in; the upkeep
-- (prune_job_changes, every minute) and expire_sync_tokens() start the log over on a database
-- whose history is not the recorded one: every row goes, `pruned_through` becomes the current
-- transaction (every token made before answers 410), a new generation.
--
-- Every function and trigger as the migrations leave them: prisma/current-functions.sql.

-- What identifies this database's history: the cluster's system identifier (set by initdb,
-- shared by a physical standby and a promoted one; pg_control_system() is PUBLIC's) and the
-- database's oid (a restore into a new database of the same cluster gets another). Not the
-- timeline: a failover that lost nothing keeps tokens exact (docs/sync-design.md). VOLATILE as
-- pg_control_system() is, so that PostgreSQL inlines it into the statements that read it.
CREATE FUNCTION database_history() RETURNS text
LANGUAGE sql VOLATILE AS $$
  SELECT s.system_identifier::text || ':' || d.oid::text FROM pg_control_system() s, pg_database d WHERE d.datname = current_database()
$$;

ALTER TABLE job_changes_horizon ADD COLUMN history text;
UPDATE job_changes_horizon SET history = database_history();

-- On a database whose history is not the log's (a restored copy): the log starts over here.
-- Rows of transactions still in progress are not seen, and stay (they are this history's);
-- `pruned_through` is at least theirs. Returns whether it did.
CREATE FUNCTION adopt_database_history() RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  IF (SELECT history FROM job_changes_horizon) IS NOT DISTINCT FROM database_history() THEN RETURN false; END IF;
  DELETE FROM job_changes;
  UPDATE job_changes_horizon SET pruned_through = pg_current_xact_id(), history = database_history(),
    generation = ((generation::bigint + 1 + floor(random() * 2147483646)::bigint) % 2147483647)::int;
  RETURN true;
END
$$;
REVOKE EXECUTE ON FUNCTION adopt_database_history() FROM PUBLIC;

-- The operator's remedy after a restore or a lossy failover: a new generation, and the log
-- adopted by this database's history when it came from another.
CREATE OR REPLACE FUNCTION expire_sync_tokens() RETURNS int
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  drawn int;
BEGIN
  PERFORM adopt_database_history();
  UPDATE job_changes_horizon SET generation = ((generation::bigint + 1 + floor(random() * 2147483646)::bigint) % 2147483647)::int
  RETURNING generation INTO drawn;
  RETURN drawn;
END
$$;

-- The upkeep adopts the history first (on a restored copy, within a minute of its start).
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
