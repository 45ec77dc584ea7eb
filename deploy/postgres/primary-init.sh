#!/bin/sh
# Runs once, when the official image initialises the primary's data directory: a role for
# streaming replication (password from the environment) and the pg_hba line that lets the
# replica connect with it.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v role="$REPLICATION_USER" -v password="$REPLICATION_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE %I WITH REPLICATION LOGIN PASSWORD %L', :'role', :'password') \gexec
SQL
echo "host replication $REPLICATION_USER all scram-sha-256" >> "$PGDATA/pg_hba.conf"
