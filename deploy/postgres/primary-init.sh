#!/bin/sh
# Runs once, when the official image initialises the primary's empty data directory: a role
# for streaming replication (password from the environment) and the pg_hba.conf line that
# lets the replica connect with it ("all" in pg_hba.conf does not cover replication).
# wal_level = replica and max_wal_senders = 10 are PostgreSQL's defaults: nothing to set.
# The image executes this file when it is executable and sources it otherwise, so it sets no
# shell options that would leak into the image's entrypoint.
: "${REPLICATION_USER:?set REPLICATION_USER}" "${REPLICATION_PASSWORD:?set REPLICATION_PASSWORD}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v role="$REPLICATION_USER" -v password="$REPLICATION_PASSWORD" <<'SQL' || exit 1
SELECT format('CREATE ROLE %I WITH REPLICATION LOGIN PASSWORD %L', :'role', :'password') \gexec
SQL
# Any address: the replica's is assigned by Compose. The password (SCRAM) is what guards it.
echo "host replication $REPLICATION_USER all scram-sha-256" >> "$PGDATA/pg_hba.conf"
