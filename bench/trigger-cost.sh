#!/usr/bin/env bash
# What a single-row screen write costs the PostgreSQL backend under each trigger configuration
# (issue 42, part 4), in instructions counted by callgrind: the same on a busy or a quiet
# machine, where a throughput ratio on this VM moves by a fifth within minutes
# (docs/summaries-design.md). A throwaway cluster (initdb, a free port of 127.0.0.1) with the
# migrations, bench/write-dataset.sql and the floor hook; then, per configuration, a single-user
# backend runs 20 + N prepared statements (each its own transaction, as the bench's writers
# send them) and another 20: the difference over N is one statement's cost.
#   npm run bench:triggers
# Needs valgrind and PostgreSQL's server tools (pg_config --bindir); as root, it runs them as
# postgres. CONFIGS: workload:label=trigger+trigger... (workloads insert, update and bulk, an
# INSERT … SELECT of 1,000 rows, N / 30 of them after 2; 'none' enables no trigger); EXTRA_SQL: a
# file run at set-up (a variant's function and its trigger, created disabled); N (300).
set -euo pipefail
N=${N:-300}
BULK_N=$(( (N + 29) / 30 )) # bulk statements of 1,000 rows counted (for N single-row ones)
CONFIGS=${CONFIGS:-insert:none insert:floor=bench_write_floor insert:summaries=screens_summary_deltas_insert update:none update:floor=bench_write_floor update:summaries=screens_summary_deltas_update}
cd "$(dirname "$0")/.."
bin=$(pg_config --bindir)
command -v valgrind > /dev/null || { echo "valgrind is needed" >&2; exit 1; }

work=$(mktemp -d)
as_owner () { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$work"
cleanup () { as_owner "$bin/pg_ctl" -D "$work/data" -m immediate stop > /dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

as_owner "$bin/initdb" -A trust -U postgres -D "$work/data" > "$work/initdb.log"
# A free TCP port on 127.0.0.1 for the migrations (Prisma's engine), nothing else listening.
port=$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })")
as_owner "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $work -c autovacuum=off -c fsync=off" start > /dev/null
url="postgresql://postgres@127.0.0.1:$port/bench"
psql "postgresql://postgres@127.0.0.1:$port/postgres" -qc 'CREATE DATABASE bench'
DATABASE_URL="$url" npm run --silent db:migrate > "$work/migrate.log"
psql "$url" -q -v ON_ERROR_STOP=1 -f bench/write-dataset.sql > /dev/null
psql "$url" -q -v ON_ERROR_STOP=1 -f bench/write-floor.sql
[ -n "${EXTRA_SQL:-}" ] && psql "$url" -q -v ON_ERROR_STOP=1 -f "$EXTRA_SQL"
as_owner "$bin/pg_ctl" -D "$work/data" -w stop > /dev/null

# The bench's two statements (bench/writer.ts, bench/fold-cost.sh), with arguments spread
# over the jobs, the scores and the last week.
statements () { # workload, count, triggers
  echo 'ALTER TABLE screens DISABLE TRIGGER USER'
  for t in ${3//+/ }; do [ "$t" = none ] || echo "ALTER TABLE screens ENABLE TRIGGER $t"; done
  echo "PREPARE ins(int, int, int) AS INSERT INTO screens (job_id, status, score, started_at, completed_at) SELECT ('00000000-0000-4000-9000-' || lpad(\$1::text, 12, '0'))::uuid, 'completed', \$2 / 10.0, t - interval '20 minutes', t FROM (SELECT now() - \$3 * interval '1 second' AS t) c"
  echo "PREPARE upd(int, int) AS UPDATE screens SET score = \$2 / 10.0 WHERE id = ('00000000-0000-4000-a000-' || lpad(\$1::text, 12, '0'))::uuid"
  # A bulk load's statement: 1,000 completed screens over the jobs and the last week.
  echo "PREPARE bulk(int) AS INSERT INTO screens (job_id, status, score, started_at, completed_at) SELECT ('00000000-0000-4000-9000-' || lpad((1 + (\$1 + g) % 100)::text, 12, '0'))::uuid, 'completed', g * 7 % 1001 / 10.0, t - interval '20 minutes', t FROM generate_series(1, 1000) g, LATERAL (SELECT now() - (g * 104729 + \$1) % 604800 * interval '1 second' AS t) c"
  local warm=20; [ "$1" = bulk ] && warm=2
  for i in $(seq 1 $((warm + $2))); do
    case "$1" in
      insert) echo "EXECUTE ins($((1 + i * 37 % 100)), $((i * 7919 % 1001)), $((i * 104729 % 604800)))" ;;
      update) echo "EXECUTE upd($((1 + i * 7919 % 100000)), $((i * 613 % 1001)))" ;;
      bulk) echo "EXECUTE bulk($i)" ;;
    esac
  done
}
instructions () { # workload, count, triggers
  statements "$@" > "$work/script"
  # Each run from the same state, the dead rows of the runs before removed, outside the count.
  echo 'VACUUM screens, screen_summary_deltas, bench_write_floor' \
    | as_owner "$bin/postgres" --single -D "$work/data" bench > /dev/null 2>&1
  as_owner valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin/postgres" --single -D "$work/data" bench \
    < "$work/script" 2> "$work/valgrind.log" > "$work/single.log"
  if grep -q 'ERROR:' "$work/single.log"; then grep -m3 'ERROR:' "$work/single.log" >&2; exit 1; fi
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/valgrind.log"
}

echo "instructions of the backend per single-row statement ($N statements each, after 20; bulk: per row, $BULK_N statements of 1,000 after 2):"
declare -A floor
for config in $CONFIGS; do
  workload=${config%%:*}; rest=${config#*:}; label=${rest%%=*}; triggers=${rest#*=}
  # A bulk statement is 1,000 rows, and the figure is per row.
  n=$N; per=1; [ "$workload" = bulk ] && { n=$BULK_N; per=1000; }
  each=$(( ($(instructions "$workload" "$n" "$triggers") - $(instructions "$workload" 0 "$triggers")) / (n * per) ))
  [ "$label" = floor ] && floor[$workload]=$each
  of=${floor[$workload]:-}
  printf '  %-7s %-24s %8d%s\n' "$workload" "$label" "$each" "${of:+$(awk -v f="$of" -v e="$each" 'BEGIN { printf ", the floor ÷ this %.3f", f / e }')}"
done
