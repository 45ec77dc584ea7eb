#!/usr/bin/env bash
# The official postgres image's documented entrypoint contract, for the offline image:
# - `postgres ...` (or flags only) runs the server as the postgres user; anything else runs as is;
# - an empty PGDATA is initialised once: superuser POSTGRES_USER (default postgres) with
#   POSTGRES_PASSWORD (required unless POSTGRES_HOST_AUTH_METHOD=trust), database POSTGRES_DB
#   (default: the user's name), POSTGRES_INITDB_ARGS passed to initdb, password auth from
#   other hosts;
# - then /docker-entrypoint-initdb.d/*.sh (run when executable, sourced otherwise), *.sql and
#   *.sql.gz, in name order, against a server that listens on its socket only, so nothing
#   from outside connects before initialisation is done.
set -Eeuo pipefail

if [ "${1:0:1}" = - ]; then set -- postgres "$@"; fi

if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
  # A new volume is root's; postgres refuses a data directory others can read.
  install -d -o postgres -g postgres -m 0700 "$PGDATA"
  chown postgres:postgres "$PGDATA" && chmod 0700 "$PGDATA"
  exec gosu postgres "${BASH_SOURCE[0]}" "$@"
fi

if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  export POSTGRES_USER=${POSTGRES_USER:-postgres}
  export POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}
  auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
    echo "Error: the database is uninitialized and POSTGRES_PASSWORD is not set" >&2
    exit 1
  fi
  # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of arguments, as documented
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "${POSTGRES_PASSWORD:-}") ${POSTGRES_INITDB_ARGS:-}
  printf '\nhost all all all %s\n' "$auth" >> "$PGDATA/pg_hba.conf"

  pg_ctl -D "$PGDATA" -w start -o "-c listen_addresses='' -p ${PGPORT:-5432}"
  sql() { psql -v ON_ERROR_STOP=1 --no-psqlrc --no-password --username "$POSTGRES_USER" "$@"; }
  if [ "$POSTGRES_DB" != postgres ]; then
    sql --dbname postgres -v db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) if [ -x "$f" ]; then echo "running $f"; "$f"; else echo "sourcing $f"; . "$f"; fi ;;
      *.sql) echo "running $f"; sql --dbname "$POSTGRES_DB" -f "$f" ;;
      *.sql.gz) echo "running $f"; gunzip -c "$f" | sql --dbname "$POSTGRES_DB" ;;
      *) [ -e "$f" ] && echo "ignoring $f" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop
  echo "PostgreSQL init process complete; ready for start up."
fi

exec "$@"
