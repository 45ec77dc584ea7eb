#!/bin/sh
# A streaming replica from the official image: on first start, copy the primary with
# pg_basebackup -R (which writes standby.signal and primary_conninfo), then run postgres.
# The image's own entrypoint would initdb an empty directory instead.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA"
  chown postgres:postgres "$PGDATA"
  chmod 0700 "$PGDATA"
  until PGPASSWORD="$REPLICATION_PASSWORD" gosu postgres pg_basebackup \
      --host="$PRIMARY_HOST" --username="$REPLICATION_USER" --pgdata="$PGDATA" \
      --write-recovery-conf --wal-method=stream --checkpoint=fast; do
    echo "replica: primary not ready, retrying in 2 s"
    rm -rf "${PGDATA:?}"/*
    sleep 2
  done
fi
exec gosu postgres postgres
