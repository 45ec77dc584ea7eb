-- The database role the API runs as: only the privileges it uses. Run as the database owner
-- after the migrations, in the API's database:
--   psql "$ADMIN_DATABASE_URL" -v role=screening_api -f prisma/sql/api-role.sql
-- then give the role a password (ALTER ROLE ... PASSWORD) and point DATABASE_URL at it.
-- Migrations and admin commands keep using the owner.
SELECT format('CREATE ROLE %I LOGIN', :'role')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role') \gexec

-- Reads of every table the API queries, nothing else on them. PostgreSQL 15 or later: from
-- 15 on, only the owner of schema public may create objects in it (older versions grant
-- CREATE to everyone). Temporary tables remain possible, as for any role.
SELECT format('GRANT USAGE ON SCHEMA public TO %I', :'role') \gexec
SELECT format('GRANT SELECT ON organizations, users, api_keys, jobs, questions, screens, job_screen_stats, organization_screen_stats, job_completion_segments, job_completion_boundaries, screen_summary_deltas, job_changes, job_changes_pending, job_changes_horizon, zone_rule_sets, zone_rules TO %I', :'role') \gexec
-- The API folds the screens' summary deltas through fold_screen_summary_deltas(), a SECURITY
-- DEFINER function that runs with its owner's rights: no write on the summaries is granted.
SELECT format('GRANT EXECUTE ON FUNCTION fold_screen_summary_deltas(int) TO %I', :'role') \gexec
-- Likewise the change log's upkeep (incremental sync): prune_job_changes(), SECURITY DEFINER.
SELECT format('GRANT EXECUTE ON FUNCTION prune_job_changes(int, int) TO %I', :'role') \gexec
-- Analytics' zone rules are read from the database; an instance stores its own when they are
-- missing (another ZONE_RULES_FILE) through load_zone_rules(), SECURITY DEFINER, which files
-- them under its own hash of them.
SELECT format('GRANT EXECUTE ON FUNCTION load_zone_rules(text) TO %I', :'role') \gexec
-- And says, every 10 minutes, that it still answers with them: keep_zone_rules(), SECURITY
-- DEFINER, which deletes the sets no instance has named for a day.
SELECT format('GRANT EXECUTE ON FUNCTION keep_zone_rules(text) TO %I', :'role') \gexec
-- And says, every 10 minutes, that it still answers with them: keep_zone_rules(), SECURITY
-- DEFINER, which deletes the sets no instance has named for a day.
SELECT format('GRANT EXECUTE ON FUNCTION keep_zone_rules(text) TO %I', :'role') \gexec
-- Webhooks (issue 41): the endpoints partners manage through the API, and the record of each
-- delivery attempt (written by the delivery worker, pruned past its retention).
SELECT format('GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoints, webhook_deliveries TO %I', :'role') \gexec
SELECT format('GRANT SELECT, INSERT, DELETE ON webhook_delivery_batches TO %I', :'role') \gexec
SELECT format('GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO %I', :'role') \gexec
-- The job queue (pg-boss, in its schema pgboss, which the migrate step installs as the owner):
-- its tables' rows and its functions, never its schema; tables a later release of pg-boss
-- adds get the same from the default privileges below.
SELECT format('GRANT USAGE ON SCHEMA pgboss TO %I', :'role') \gexec
SELECT format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA pgboss TO %I', :'role') \gexec
SELECT format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA pgboss TO %I', :'role') \gexec
SELECT format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgboss TO %I', :'role') \gexec
SELECT format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgboss GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I', :'role') \gexec
SELECT format('ALTER DEFAULT PRIVILEGES IN SCHEMA pgboss GRANT USAGE, SELECT ON SEQUENCES TO %I', :'role') \gexec
-- The one write: when a key was last used (throttled to once per 5 minutes per key).
SELECT format('GRANT UPDATE (last_used_at) ON api_keys TO %I', :'role') \gexec
-- A bound on any statement, whatever the pool says. (Not read-only by default: the write
-- above needs a writable transaction.)
SELECT format('ALTER ROLE %I SET statement_timeout = %L', :'role', '5s') \gexec
SELECT format('ALTER ROLE %I SET idle_in_transaction_session_timeout = %L', :'role', '10s') \gexec
-- Doubles as text in their shortest exact form (the default from PostgreSQL 12 on, whatever a
-- database's setting says): small jobs' averages are summed from `score::text`, as the
-- summaries are.
SELECT format('ALTER ROLE %I SET extra_float_digits = %L', :'role', '3') \gexec
-- Timestamps in UTC whatever the server's or the database's TimeZone: Prisma's pg adapter
-- reads a timestamptz's text as UTC (it replaces the offset without converting) and writes a
-- Date parameter as UTC wall time without an offset, so any other session zone shifted every
-- created_at and updated_at the API shows (prisma/orm#26786).
SELECT format('ALTER ROLE %I SET TimeZone = %L', :'role', 'UTC') \gexec
