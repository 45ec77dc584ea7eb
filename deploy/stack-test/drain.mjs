// After the stack test's phases: every webhook delivery job and every batch being sent (an
// endpoint's lease, left by a killed instance too) must run out (at least once, so none may
// stay queued or stuck after a kill, nor fail for good), within DRAIN_S; then every
// event the API recorded as delivered (a 2xx) must be among those the receiver recorded. Prints the waiting
// jobs, the time they took, the API's attempts by outcome and pg-boss's jobs by state (retried:
// made again after their instance was killed); exits 1 when either check fails.
//   STACK_DATABASE_URL=postgresql://… STACK_RECEIVER_URL=http://127.0.0.1:28080 node drain.mjs
import pg from 'pg'

const receiverUrl = process.env.STACK_RECEIVER_URL ?? 'http://127.0.0.1:28080'
// A backlog with no new job to wake the workers drains at their polls (every 10 s each while
// notifications are on; one job of an endpoint at a time): the 68 to 71 the kill phase left
// took 84 to 135 s.
const drainMs = Number(process.env.DRAIN_S ?? 400) * 1000
const client = new pg.Client({ connectionString: process.env.STACK_DATABASE_URL, application_name: 'stack-test-drain' })
await client.connect()

const pending = async () => (await client.query(`SELECT (SELECT count(*)::int FROM pgboss.job WHERE name = 'webhook-delivery' AND state IN ('created', 'retry', 'active'))
  + (SELECT count(*)::int FROM webhook_endpoints WHERE status = 'enabled' AND sending_until > now()) AS n`)).rows[0].n
const start = Date.now()
const first = await pending()
let left = first
while (left > 0 && Date.now() - start < drainMs) {
  await new Promise(resolve => setTimeout(resolve, 1000))
  left = await pending()
}
console.log(`webhooks: ${first} delivery jobs and batches waiting after the last phase; ${left} ${((Date.now() - start) / 1000).toFixed(1)} s later`)

// First attempts delivered are recorded a row per batch (webhook_delivery_batches), the others a row each.
const attempts = (await client.query(`SELECT outcome, sum(n)::int AS n FROM (
  SELECT outcome, count(*) AS n FROM webhook_deliveries GROUP BY 1
  UNION ALL SELECT 'delivered', coalesce(sum(cardinality(event_ids)), 0) FROM webhook_delivery_batches) a GROUP BY 1 ORDER BY 1`)).rows
const jobs = (await client.query("SELECT state, count(*)::int AS n, sum(retry_count)::int AS retried FROM pgboss.job WHERE name = 'webhook-delivery' GROUP BY 1 ORDER BY 1")).rows
const delivered = new Set((await client.query(`SELECT event_id FROM webhook_deliveries WHERE outcome = 'delivered'
  UNION SELECT unnest(event_ids) FROM webhook_delivery_batches`)).rows.map(r => r.event_id))
await client.end()
console.log(`webhooks, the API's record: attempts ${attempts.map(r => `${r.outcome} ${r.n}`).join(', ')}; pg-boss delivery jobs ${jobs.map(r => `${r.state} ${r.n} (${r.retried} retries)`).join(', ')}`)

const response = await fetch(new URL('/deliveries', receiverUrl), { signal: AbortSignal.timeout(5000) })
const { records, counts } = await response.json()
const received = new Set(records.filter(r => r.verified).map(r => r.id))
const missing = [...delivered].filter(id => !received.has(id))
console.log(`webhooks, the receiver: ${records.length} deliveries recorded (${received.size} webhook-ids, ${counts.badSignature} bad signatures, ${counts.refusedOnPurpose} refused on purpose, ${counts.abandoned} left unanswered by a killed sender); ${delivered.size} webhook-ids the API recorded as delivered, ${missing.length} of them not received`)
for (const id of missing.slice(0, 10)) console.error(`recorded as delivered, never received: ${id}`)
const failed = jobs.find(r => r.state === 'failed')?.n ?? 0
if (failed > 0) console.error(`${failed} delivery jobs failed for good`)
process.exitCode = left === 0 && failed === 0 && missing.length === 0 ? 0 : 1
