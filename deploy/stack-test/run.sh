#!/usr/bin/env bash
# The deployment of docker-compose.yml on the built images, under load: start with generated
# secrets, seed through the documented path (npm run db:seed and npm run admin from this
# checkout, against the primary on a loopback port: compose.test.yml), then a client load
# through the proxy (load.mjs) during each phase: an API instance stopped and started, a
# rolling restart, scaling 2 -> 3 -> 2, the replica stopped and started, Redis stopped and
# started, the instance delivering a webhook killed. Each phase must end with 0 failed
# requests. Meanwhile writer.mjs changes jobs on the primary, and every change must reach the
# webhook receiver (receiver.mjs, one endpoint made through the API): the API instances are
# the webhook workers the phases stop. Then the delivery queue must drain (drain.mjs); down -v.
# Needs the images (deploy/offline-images/build.sh, docker build -t screening-read-api:local .),
# Debian's docker-compose 1.29 and this checkout's npm ci.
set -euo pipefail
cd "$(dirname "$0")/../.."

export COMPOSE_PROJECT_NAME=screening-stacktest
# The primary's loopback port: a free one below the ephemeral range (32768-60999 on Linux),
# where a client socket of another process could take it between this check and compose up.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -z "${STACK_TEST_PG_PORT:-}" ]; then
  for STACK_TEST_PG_PORT in $(seq 25432 25532); do port_free "$STACK_TEST_PG_PORT" && break; done
fi
# The webhook receiver's loopback port, from which its records are read: the same way.
if [ -z "${STACK_TEST_RECEIVER_PORT:-}" ]; then
  for STACK_TEST_RECEIVER_PORT in $(seq 28080 28180); do port_free "$STACK_TEST_RECEIVER_PORT" && break; done
fi
export STACK_TEST_PG_PORT STACK_TEST_RECEIVER_PORT
POSTGRES_PASSWORD=$(openssl rand -hex 24) API_DB_PASSWORD=$(openssl rand -hex 24)
REPLICATION_PASSWORD=$(openssl rand -hex 24) CURSOR_SECRET=$(openssl rand -base64 48)
WEBHOOK_SECRET_KEY=$(openssl rand -base64 32)
export POSTGRES_PASSWORD API_DB_PASSWORD REPLICATION_PASSWORD CURSOR_SECRET WEBHOOK_SECRET_KEY
export STACK_URL=http://127.0.0.1:3000
owner_url=postgresql://screening:$POSTGRES_PASSWORD@127.0.0.1:$STACK_TEST_PG_PORT/screening
export STACK_DATABASE_URL=$owner_url STACK_RECEIVER_URL=http://127.0.0.1:$STACK_TEST_RECEIVER_PORT

compose() { docker-compose -f docker-compose.yml -f deploy/stack-test/compose.test.yml "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
container() { echo "${COMPOSE_PROJECT_NAME}_$1"; }
api_containers() { docker ps --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" --filter label=com.docker.compose.service=api --format '{{.Names}}' | sort; }

# Until the container's HEALTHCHECK reports healthy (60 s at most).
healthy() {
  for _ in $(seq 1 120); do
    [ "$(docker inspect -f '{{.State.Health.Status}}' "$1" 2>/dev/null)" = healthy ] && return 0
    sleep 0.5
  done
  echo "FATAL: $1 not healthy after 60 s" >&2; docker logs --tail 30 "$1" >&2; return 1
}

mkdir -p test-output
cleanup() {
  compose logs --no-color > test-output/stack-test-compose.log 2>&1 || true
  compose down -v --remove-orphans >/dev/null 2>&1 || true
}
trap cleanup EXIT
# A previous run that died leaves its containers and volumes: start from nothing.
compose down -v --remove-orphans >/dev/null 2>&1 || true
if ! port_free 3000; then echo "FATAL: something already answers on port 3000" >&2; exit 1; fi

echo "-- up"
start=$(now)
compose up -d --no-build > test-output/stack-test-up.log 2>&1 || { cat test-output/stack-test-up.log >&2; exit 1; }
for _ in $(seq 1 120); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$STACK_URL/health/ready")" = 200 ] && break
  sleep 0.5
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "$STACK_URL/health/ready")" = 200 ] || { echo "FATAL: the stack is not ready after 60 s" >&2; compose ps >&2; exit 1; }
echo "stack ready through the proxy in $(since "$start") s (from compose up; images present)"
healthy "$(container postgres-replica_1)"
healthy "$(container webhook-receiver_1)"
compose ps

# What the traced node_modules must still serve: Swagger UI's static files, the document.
for check in /openapi.json:200 /docs/:200 /docs/static/swagger-ui-bundle.js:200 /metrics:404; do
  status=$(curl -s -o /dev/null -w '%{http_code}' "$STACK_URL${check%:*}")
  [ "$status" = "${check##*:}" ] || { echo "FATAL: GET ${check%:*} answered $status, not ${check##*:}" >&2; exit 1; }
done
echo "through the proxy: /openapi.json, /docs/ and its assets 200, /metrics 404"

echo "-- seed (npm run db:seed and npm run admin against the primary)"
seed=$(DATABASE_URL=$owner_url npm run -s db:seed)
echo "$seed" | sed -E 's/(srk_[A-Za-z0-9]{8})[A-Za-z0-9_-]+/\1…/g'
pro_key=$(echo "$seed" | awk '$1 == "pro" { print $NF; exit }')
org=$(DATABASE_URL=$owner_url npm run -s admin -- create-org --name "Stack test" --plan pro | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).id')
user=$(DATABASE_URL=$owner_url npm run -s admin -- create-user --org "$org" --email ops@stack.test --name Ops | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).id')
admin_key=$(DATABASE_URL=$owner_url npm run -s admin -- create-key --user "$user" --name load | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).key')
echo "admin: organization $org, user $user, key ${admin_key:0:12}…"
jobs=$(curl -sf -H "authorization: Bearer $pro_key" "$STACK_URL/api/jobs?limit=5" | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).data.map(j => j.id).join(",")')
[ -n "$jobs" ] || { echo "FATAL: the seeded organization lists no job through the proxy" >&2; exit 1; }
export STACK_KEYS="$pro_key,$admin_key" STACK_JOBS=$jobs
echo "load: jobs $jobs; the seeded pro key and the admin-made key (whose organization has no job: 404s, an empty list)"

# One webhook endpoint of the seeded organization, made the documented way (through the
# proxy, with its pro key), at the receiver: http to a name in the allowed subnet.
endpoint=$(curl -sf -X POST -H "authorization: Bearer $pro_key" -H 'content-type: application/json' \
  -d '{"url": "http://webhook-receiver:8080/hooks", "description": "stack test"}' "$STACK_URL/api/webhook_endpoints") ||
  { echo "FATAL: POST /api/webhook_endpoints failed" >&2; curl -s -X POST -H "authorization: Bearer $pro_key" -H 'content-type: application/json' -d '{"url": "http://webhook-receiver:8080/hooks"}' "$STACK_URL/api/webhook_endpoints" >&2; exit 1; }
read -r endpoint_id endpoint_events secret < <(echo "$endpoint" | node -e 'const e = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(e.id, e.events.join(","), e.secret)')
# The receiver verifies every signature with it (until then it answers 503, retried).
curl -sf -X PUT --data "$secret" "$STACK_RECEIVER_URL/secret" || { echo "FATAL: the receiver did not take the secret" >&2; exit 1; }
write_jobs=$(curl -sf -H "authorization: Bearer $pro_key" "$STACK_URL/api/jobs?limit=10" | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).data.map(j => j.id).join(",")')
export STACK_WRITE_JOBS=$write_jobs STACK_ENDPOINT_ID=$endpoint_id
echo "webhooks: endpoint $endpoint_id ($endpoint_events) at http://webhook-receiver:8080/hooks (subnet ${STACK_TEST_SUBNET:-172.30.240.0/24} allowed); writes: 4 a second over $(echo "$write_jobs" | tr ',' '\n' | wc -l) jobs"

# load PHASE ACTION...: the load and the job writes from 3 s before the action to 5 s after
# it; then the writer waits (up to 60 s) for the webhook events of its changes.
failures=0 lost=0
load() {
  local phase=$1 pid writer phase_start; shift
  phase_start=$(now)
  node deploy/stack-test/load.mjs "$phase" & pid=$!
  node deploy/stack-test/writer.mjs "$phase" & writer=$!
  sleep 3
  "$@"
  sleep 5
  # Either may have exited already (a crash): its wait below reports it.
  kill -TERM "$pid" "$writer" 2>/dev/null || true
  wait "$pid" || failures=$((failures + 1))
  wait "$writer" || lost=$((lost + 1))
  echo "$phase: $(since "$phase_start") s"
}
stop_start_one() { local c; c=$(api_containers | head -1); docker stop "$c" >/dev/null; sleep 2; docker start "$c" >/dev/null; healthy "$c"; }
rolling() { local c; for c in $(api_containers); do docker restart "$c" >/dev/null; healthy "$c"; done; }
scale() {
  compose up -d --no-build --no-deps --no-recreate --scale api=3 api 2>&1 | grep -v '^Starting\|^Creating\|is up-to-date' || true
  for c in $(api_containers); do healthy "$c"; done
  echo "   scaled to $(api_containers | wc -l) instances"
  sleep 3
  compose up -d --no-build --no-deps --no-recreate --scale api=2 api 2>&1 | grep -v '^Stopping\|^Removing\|is up-to-date' || true
  echo "   scaled to $(api_containers | wc -l) instances"
}
stop_start() { compose stop "$1" 2>&1 | grep -v '^Stopping' || true; sleep 5; compose start "$1" 2>&1 | grep -v '^Starting' || true; healthy "$(container "$1_1")"; }
# The instance sending a webhook killed (SIGKILL) mid-delivery: the receiver holds its
# deliveries 3 s and names the sender's address, so the kill lands on a delivery in flight,
# which no graceful stop above leaves. pg-boss must make it again on the other instance.
kill_delivering() {
  local address="" c target=""
  curl -sf -X PUT "$STACK_RECEIVER_URL/hold?ms=3000"
  for _ in $(seq 1 50); do
    address=$(curl -sf "$STACK_RECEIVER_URL/inflight" | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8"))[0]?.address ?? ""')
    [ -n "$address" ] && break
    sleep 0.2
  done
  for c in $(api_containers); do
    [ "$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$c")" = "$address" ] && target=$c
  done
  [ -n "$target" ] || { echo "FATAL: no API instance at '$address' delivering within 10 s" >&2; return 1; }
  docker kill "$target" >/dev/null
  echo "   killed $target ($address) while it delivered"
  curl -sf -X PUT "$STACK_RECEIVER_URL/hold?ms=0"
  # Its restart policy may have started it again already; if not, started by hand.
  sleep 2; docker start "$target" >/dev/null; healthy "$target"
}

echo "-- phases (0 failed requests and 0 changes without a webhook event each)"
load "warm-up" true
load "(a) one API instance stopped and started" stop_start_one
load "(b) rolling restart, one instance at a time" rolling
load "(c) scale 2 -> 3 -> 2" scale
load "(d) replica stopped and started" stop_start postgres-replica
load "(e) Redis stopped and started" stop_start redis
load "(f) the instance delivering a webhook killed and started" kill_delivering
# Then the webhook queue must run out, and what the API recorded as delivered be received.
drained=0
node deploy/stack-test/drain.mjs || drained=1
# What each API instance of the image holds after the phases' load, webhook worker included
# (the bench's figures against its baseline: docs/performance.md, "Memory").
echo "memory after the phases: $(docker stats --no-stream --format '{{.Name}} {{.MemUsage}}' $(api_containers) 2>/dev/null | paste -sd ';' || true)"
[ "$failures" = 0 ] || { echo "FATAL: $failures phase(s) had failed requests (logs: test-output/stack-test-compose.log)" >&2; exit 1; }
[ "$lost" = 0 ] || { echo "FATAL: $lost phase(s) had job changes without a webhook event, or failed writes (logs: test-output/stack-test-compose.log)" >&2; exit 1; }
[ "$drained" = 0 ] || { echo "FATAL: webhook deliveries still waiting 400 s after the last phase, failed for good, or recorded as delivered and not received" >&2; exit 1; }
echo "-- all phases: 0 failed requests, every job change followed by its webhook event"
