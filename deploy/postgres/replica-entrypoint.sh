#!/bin/sh
# A streaming replica from the official image. The image's own entrypoint would initdb an
# empty data directory (a second, unrelated primary), so on first start this copies the
# primary instead: pg_basebackup -R writes standby.signal and primary_conninfo (with the
# password), so later starts need neither. Runs as root, like the image's entrypoint, to
# own the volume; the server runs as postgres.
set -eu
: "${PGDATA:?}" "${PRIMARY_HOST:?}" "${REPLICATION_USER:?}" "${REPLICATION_PASSWORD:?}"
mkdir -p "$PGDATA"
# A new volume is root's; postgres refuses a data directory others can read.
chown postgres:postgres "$PGDATA"
chmod 0700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  # Until the primary is up and has run its init script (the replication role).
  until PGPASSWORD="$REPLICATION_PASSWORD" gosu postgres pg_basebackup \
      --host="$PRIMARY_HOST" --username="$REPLICATION_USER" --pgdata="$PGDATA" \
      --write-recovery-conf --wal-method=stream --checkpoint=fast; do
    echo "replica: base backup from $PRIMARY_HOST failed; retrying in 2 s" >&2
    # pg_basebackup needs an empty directory; it cleans up after itself, this is a backstop.
    find "$PGDATA" -mindepth 1 -delete
    sleep 2
  done
  echo "replica: base backup from $PRIMARY_HOST done; starting as a standby" >&2
fi
exec gosu postgres postgres "$@"
