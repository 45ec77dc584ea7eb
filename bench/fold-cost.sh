#!/usr/bin/env bash
# What single-row screen writes pay for the summaries when CPU, not the disk's flushes, bounds
# them (issue 42, part 4): pgbench writers with synchronous_commit off on a throwaway database,
# the migrations applied, 100 jobs and 100,000 screens. Each round runs every workload with
# the floor hook (bench/writes.ts's), the deltas' trigger alone, and the trigger with the fold
# every second as an instance runs it; medians and ratios to the floor at the end. The
# difference between the last two is the fold's share (docs/summaries-design.md).
#   BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres bash bench/fold-cost.sh
# Needs pgbench and psql (PostgreSQL's client tools). ROUNDS, SECONDS_EACH, CLIENTS to change;
# JOBS (1 to 100, default 100) to write the screens of fewer jobs (1: the main bench's "one job").
# CONFIGS adds controls to 'floor trigger trigger+fold': `nolock`, the fold without its lock on
# the jobs (a copy of it; unsafe beside deletions, a measurement only); `burn`, a backend
# spinning each second for the last trigger+fold run's median fold (its CPU, nothing else);
# `floor+delete`, the floor hook with its rows deleted each second (the least any fold that
# deletes what it moved does); `minimal`, the trigger with a fold that only deletes the deltas
# and sums them per job (no log, no weeks: inexact, a measurement only); `fn:NAME`, the trigger
# with NAME(20000) called as the fold, a function of EXTRA_SQL (a file run at set-up), to try one.
set -euo pipefail
: "${BENCH_DATABASE_URL:?a PostgreSQL server on which to make a throwaway database, for example postgresql://postgres@127.0.0.1:5432/postgres}"
ROUNDS=${ROUNDS:-3}
SECONDS_EACH=${SECONDS_EACH:-5}
CLIENTS=${CLIENTS:-2}
JOBS=${JOBS:-100}
CONFIGS=${CONFIGS:-floor trigger trigger+fold}
cd "$(dirname "$0")/.."

db="bench_fold_$(date +%Y%m%d%H%M%S)_$$"
url="${BENCH_DATABASE_URL%/*}/$db"
work=$(mktemp -d)
fold_pid=
cleanup () {
  touch "$work/stop"; [ -n "$fold_pid" ] && wait "$fold_pid" 2>/dev/null || true
  psql "$BENCH_DATABASE_URL" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true
  rm -rf "$work"
}
trap cleanup EXIT
sql () { psql "$url" -q -v ON_ERROR_STOP=1 "$@"; }

psql "$BENCH_DATABASE_URL" -qc "CREATE DATABASE $db"
DATABASE_URL="$url" npm run --silent db:migrate > "$work/migrate.log"
sql -f bench/write-dataset.sql
sql -f bench/write-floor.sql
# The two controls' functions (used only when CONFIGS names them).
psql "$url" -qAtc "SELECT pg_get_functiondef('fold_screen_summary_deltas(integer)'::regprocedure)" \
  | sed -e 's/public\.fold_screen_summary_deltas/public.bench_fold_without_lock/' -e 's/ FOR KEY SHARE OF j SKIP LOCKED//' | sql
sql <<'SQL'
CREATE FUNCTION bench_burn(ms numeric) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t timestamptz := clock_timestamp();
BEGIN WHILE clock_timestamp() - t < ms * interval '1 ms' LOOP END LOOP; END $$;
CREATE FUNCTION bench_floor_delete() RETURNS int LANGUAGE sql
  AS $$ WITH d AS (DELETE FROM bench_write_floor RETURNING 1) SELECT count(*)::int FROM d $$;
CREATE FUNCTION bench_fold_minimal(max_deltas int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE moved int;
BEGIN
  WITH moved AS (
    DELETE FROM screen_summary_deltas
    WHERE id <= (SELECT max(id) FROM (SELECT id FROM screen_summary_deltas ORDER BY id LIMIT max_deltas) oldest)
    RETURNING job_id, in_progress, completed, expired, scored, score_sum, changed_at
  ), stats AS (
    INSERT INTO job_screen_stats AS t (job_id, slot, in_progress, completed, expired, scored, score_sum, version, changes)
    SELECT job_id, 0, sum(in_progress), sum(completed), sum(expired), sum(scored), sum(score_sum), max(changed_at), count(*)
    FROM moved GROUP BY job_id
    ON CONFLICT (job_id, slot) DO UPDATE SET
      in_progress = t.in_progress + excluded.in_progress, completed = t.completed + excluded.completed,
      expired = t.expired + excluded.expired, scored = t.scored + excluded.scored, score_sum = t.score_sum + excluded.score_sum,
      version = greatest(t.version, excluded.version), changes = t.changes + excluded.changes
  )
  SELECT count(*) INTO moved FROM moved;
  RETURN moved;
END $$;
SQL

[ -n "${EXTRA_SQL:-}" ] && sql -f "$EXTRA_SQL"

# The main bench's two statements (bench/writer.ts): a completed screen in the last week, a score.
cat > "$work/insert.sql" <<EOF
\set j random(1, $JOBS)
\set s random(0, 1000)
\set d random(0, 604800)
INSERT INTO screens (job_id, status, score, started_at, completed_at) SELECT ('00000000-0000-4000-9000-' || lpad(:j::text, 12, '0'))::uuid, 'completed', :s / 10.0, t - interval '20 minutes', t FROM (SELECT now() - :d * interval '1 second' AS t) c;
EOF
# Screen g belongs to job 1 + g % 100 (bench/write-dataset.sql): one of the first JOBS jobs'.
cat > "$work/update.sql" <<EOF
\set g 100 * random(1, 999) + random(0, $((JOBS - 1)))
\set s random(0, 1000)
UPDATE screens SET score = :s / 10.0 WHERE id = ('00000000-0000-4000-a000-' || lpad(:g::text, 12, '0'))::uuid;
EOF

# Calls $1 every second until told to stop, its last call finished (a stop file, not a
# signal), each call's milliseconds (psql's \timing) in $work/ms. One session for all calls,
# as an instance folds on a pooled connection: a new session per call (psql, before
# 2026-11-29) doubled a call's cost with its catalog and plan caches' warming.
folding () {
  { echo '\timing on'; while [ ! -e "$work/stop" ]; do echo "SELECT $1;"; sleep 1; done; } \
    | psql "$url" -qAt | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' > "$work/ms"
}
median_of () { sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
fold_ms=100

results="$work/results"
read -ra configs <<< "$CONFIGS"
for round in $(seq "$ROUNDS"); do
  # The order rotates from round to round, as in bench/writes.ts: a checkpoint or the machine's
  # slower minutes do not fall on one configuration every round.
  k=$(( (round - 1) % ${#configs[@]} ))
  order=("${configs[@]:k}" "${configs[@]:0:k}")
  for workload in insert update; do
    for config in "${order[@]}"; do
      # Each measurement starts from the same state: nothing left to fold, no dead rows.
      sql -c 'SELECT fold_screen_summary_deltas(100000)' -c 'DELETE FROM bench_write_floor' > /dev/null
      sql -c 'VACUUM screens, screen_summary_deltas, bench_write_floor, job_changes, job_screen_stats, job_completion_segments, job_completion_boundaries'
      if [ "$config" = minimal ]; then
        sql -c 'ALTER TABLE screen_summary_deltas DISABLE TRIGGER screen_summary_deltas_log_changes'
      else
        sql -c 'ALTER TABLE screen_summary_deltas ENABLE TRIGGER screen_summary_deltas_log_changes'
      fi
      if [ "${config%+delete}" = floor ]; then
        sql -c 'ALTER TABLE screens DISABLE TRIGGER USER; ALTER TABLE screens ENABLE TRIGGER bench_write_floor'
      else
        sql -c 'ALTER TABLE screens ENABLE TRIGGER USER; ALTER TABLE screens DISABLE TRIGGER bench_write_floor'
      fi
      rm -f "$work/stop" "$work/ms"
      case "$config" in
        trigger+fold) folding 'fold_screen_summary_deltas(20000)' & fold_pid=$! ;;
        nolock) folding 'bench_fold_without_lock(20000)' & fold_pid=$! ;;
        burn) folding "bench_burn($fold_ms)" & fold_pid=$! ;;
        floor+delete) folding 'bench_floor_delete()' & fold_pid=$! ;;
        minimal) folding 'bench_fold_minimal(20000)' & fold_pid=$! ;;
        fn:*) folding "${config#fn:}(20000)" & fold_pid=$! ;;
      esac
      tps=$(PGOPTIONS='-c synchronous_commit=off' pgbench "$url" -n -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_EACH" -M prepared -f "$work/$workload.sql" 2>/dev/null \
        | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
      calls=
      if [ -n "$fold_pid" ]; then
        touch "$work/stop"; wait "$fold_pid" || true; fold_pid=
        ms=$(median_of < "$work/ms"); calls=$(printf '(%s calls, median %s ms)' "$(wc -l < "$work/ms")" "$ms")
        [ "$config" = trigger+fold ] && fold_ms=$ms
      fi
      printf '  [%s/%s] %-7s %-13s %8.0f tx/s %s\n' "$round" "$ROUNDS" "$workload" "$config" "$tps" "$calls"
      echo "$workload $config $tps" >> "$results"
    done
  done
done

echo "medians over $ROUNDS round(s) of $SECONDS_EACH s, $CLIENTS pgbench clients, synchronous_commit off:"
for workload in insert update; do
  median () { grep "^$workload $1 " "$results" | awk '{print $3}' | median_of; }
  floor=$(median floor)
  for config in $CONFIGS; do
    awk -v w="$workload" -v c="$config" -v f="$floor" -v m="$(median "$config")" 'BEGIN { printf "  %-7s %-13s %6.0f tx/s, %.2f of the floor\n", w, c, m, m / f }'
  done
done
