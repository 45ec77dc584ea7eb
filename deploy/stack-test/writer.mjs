// The stack test's job writer and webhook check, beside load.mjs during each phase: until
// SIGTERM or SIGINT (at most 300 s) it changes a job's title a few times a second, as the
// recruiters' app would, on the primary (the owner's URL on the loopback port), and records
// each change's job and transaction. Then, for up to SETTLE_S, it asks the receiver
// (receiver.mjs) until every change has a job.updated event received for it: the webhook-id
// of its own entry of the change log or of a later change of its job (an event names the job
// and never its fields), computed here from the documented derivation, not the API's code.
// Not by the clock: an event may reach the receiver before this process reads the time after
// its COMMIT (a loaded host), which once passed for a lost change. Prints the figures and
// exits 1 on a change without one (lost), a failed write or a delivery whose signature did
// not verify.
//   STACK_DATABASE_URL=postgresql://… STACK_RECEIVER_URL=http://127.0.0.1:28080 \
//   STACK_WRITE_JOBS=id1,id2 STACK_ENDPOINT_ID=uuid node writer.mjs PHASE
import { createHash } from 'node:crypto'
import pg from 'pg'

const phase = process.argv[2] ?? 'writes'
const databaseUrl = process.env.STACK_DATABASE_URL
const receiverUrl = process.env.STACK_RECEIVER_URL ?? 'http://127.0.0.1:28080'
const jobs = (process.env.STACK_WRITE_JOBS ?? '').split(',').filter(Boolean)
const endpointId = process.env.STACK_ENDPOINT_ID
const perSecond = Number(process.env.STACK_WRITES_PER_S ?? 4)
const settleMs = Number(process.env.SETTLE_S ?? 60) * 1000
const maxMs = 300_000
if (databaseUrl === undefined || jobs.length === 0 || endpointId === undefined) throw new Error('set STACK_DATABASE_URL, STACK_WRITE_JOBS and STACK_ENDPOINT_ID')

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
const started = Date.now()
// The receiver's records from before this phase are not fetched again: only the later ones
// can follow this phase's changes.
const deliveries = async from => {
  const response = await fetch(new URL(`/deliveries?from=${from}`, receiverUrl), { signal: AbortSignal.timeout(5000) })
  if (!response.ok) throw new Error(`receiver: GET /deliveries answered ${response.status}`)
  return await response.json()
}
const first = await deliveries(0)
const from = first.total
const badBefore = first.counts.badSignature
const refusedBefore = first.counts.refusedOnPurpose
const abandonedBefore = first.counts.abandoned

const client = new pg.Client({ connectionString: databaseUrl, application_name: 'stack-test-writer' })
await client.connect()
// The change log's history and generation, which every webhook-id of a change is derived
// from (docs/webhooks-design.md: sha256 of endpoint, history, generation, transaction, job).
const { rows: [log] } = await client.query('SELECT database_history() AS history, (SELECT generation FROM job_changes_horizon) AS generation')
const history = createHash('sha256').update(log.history).digest('hex').slice(0, 16)
const webhookId = (xid, job) => 'msg_' + createHash('sha256').update(`${endpointId}:${history}:${log.generation}:${xid}:${job}`).digest('base64url').slice(0, 32)
const state = { stopped: false }
const stop = () => { state.stopped = true }
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
setTimeout(stop, maxMs).unref()

const changes = []
let failedWrites = 0
for (let i = 0; !state.stopped; i++) {
  const job = jobs[i % jobs.length]
  const due = started + (i + 1) * (1000 / perSecond)
  try {
    // One statement, so its own transaction: it has committed when the query returns. The
    // title keeps its text, with a revision number that changes every time.
    const { rows } = await client.query(String.raw`UPDATE jobs SET title = regexp_replace(title, ' \(rev \d+\)$', '') || ' (rev ' || $2 || ')', updated_at = now() WHERE id = $1 RETURNING pg_current_xact_id()::text AS xid`, [job, String(Date.now())])
    if (rows.length !== 1) throw new Error('no such job')
    changes.push({ job, xid: BigInt(rows[0].xid), committedAt: Date.now() })
  } catch (error) {
    // The first few say why; the count is in the figures.
    if (++failedWrites <= 3) console.error(`${phase}: write to job ${job} failed: ${error.message}`)
  }
  if (!state.stopped) await sleep(Math.max(0, due - Date.now()))
}
const wroteFor = (Date.now() - started) / 1000
await client.end()

// A change is covered by the event of its own entry or of a later change of its job (the
// dispatcher tells a job once per run, named after its last change read).
const coveringIds = new Map(changes.map(change => [change, new Set(changes.filter(c => c.job === change.job && c.xid >= change.xid).map(c => webhookId(c.xid, c.job)))]))
const covering = (change, records) => records.filter(r => r.verified && r.type === 'job.updated' && r.job === change.job && coveringIds.get(change).has(r.id))
let records = []
let uncovered = changes
const settleStart = Date.now()
let counts = first.counts
for (;;) {
  const page = await deliveries(from + records.length).catch(error => { console.error(`${phase}: ${error.message}`); return undefined })
  if (page !== undefined) { records = records.concat(page.records); counts = page.counts }
  uncovered = changes.filter(change => covering(change, records).length === 0)
  if (uncovered.length === 0 || Date.now() - settleStart > settleMs) break
  await sleep(500)
}
const settled = (Date.now() - settleStart) / 1000

// How long after its commit (as this process saw it) each change's covering event arrived.
const latencies = changes.flatMap(change => {
  const after = covering(change, records).map(r => r.receivedAt)
  return after.length === 0 ? [] : [Math.min(...after) - change.committedAt]
}).sort((a, b) => a - b)
// Covered by an event received before this process read the time after the commit.
const early = latencies.filter(ms => ms <= 0).length
const quantile = q => latencies.length === 0 ? 0 : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
const events = records.filter(r => r.verified)
const ids = new Set(events.map(r => r.id))
const bad = counts.badSignature - badBefore

console.log(`${phase}: webhooks: ${changes.length} changes in ${wroteFor.toFixed(1)} s (${failedWrites} failed writes); ${events.length} events received (${ids.size} webhook-ids, ${events.length - ids.size} redelivered, ${counts.refusedOnPurpose - refusedBefore} first attempts refused on purpose and retried, ${counts.abandoned - abandonedBefore} left unanswered by a killed sender; ${bad} bad signatures); settled ${settled.toFixed(1)} s after the last change; commit to event p50 ${quantile(0.5)} ms, p99 ${quantile(0.99)} ms, max ${latencies.at(-1) ?? 0} ms (${early} received before this process saw its COMMIT return); ${uncovered.length} changes without a later event`)
for (const change of uncovered.slice(0, 10)) console.error(`${phase}: lost: job ${change.job} changed at ${new Date(change.committedAt).toISOString()} (transaction ${change.xid}), no job.updated received with its webhook-id or a later change's`)
process.exitCode = uncovered.length === 0 && failedWrites === 0 && bad === 0 ? 0 : 1
