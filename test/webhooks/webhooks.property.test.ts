import fc from 'fast-check'
import pg from 'pg'
import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createScreens, createTenant, type Tenant } from '../helpers/fixtures.js'
import { checkProperty } from '../helpers/property.js'
import { apply, transaction } from '../helpers/random-writes.js'
import { walkThenSync, type Mirror } from '../helpers/sync-mirror.js'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js'
import { makeEndpoint } from '../helpers/webhooks.js'
import { sleep } from '../helpers/sleep.js'

// No change is missed by webhooks either (issue 41): writers change jobs of two organizations
// (and move them between the two) in concurrent transactions, while each organization's
// endpoint fails (500s for a while), is disabled and enabled again. A partner keeps a mirror
// from its webhook events alone: a walk when its endpoint is made, then every job an event
// names read again (GET: its state now, or gone on a 404). Once the writers stop and the
// deliveries settle, each mirror must equal a fresh walk of its organization. On a PostgreSQL
// server only: the embedded database has one connection, so nothing overlaps.

const env = { RATE_LIMIT_MAX: '1000000', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', WEBHOOK_RETRY_DELAYS: '50ms,100ms,200ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms', WEBHOOK_DISPATCH_INTERVAL_MS: '50' }
const { app, prisma, db } = await buildTestApp(t, { env })
const skip = db.url === undefined ? 'needs a PostgreSQL server (TEST_DATABASE_URL): the embedded database has one connection' : false

const scenario = fc.record({
  jobs: fc.integer({ min: 1, max: 6 }),
  writers: fc.array(fc.array(transaction, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 3 }),
  // Per organization: how many first deliveries fail (500), and whether its endpoint is disabled a while.
  failures: fc.tuple(fc.nat(6), fc.nat(6)),
  pauses: fc.tuple(fc.boolean(), fc.boolean()),
})

interface Partner { tenant: Tenant, receiver: Receiver, endpointId: string, mirror: Mirror }

/** The mirror kept from events: every job named, read again now. */
async function applyEvents (partner: Partner): Promise<void> {
  for (const id of new Set(partner.receiver.received.map(r => r.jobId))) {
    const res = await app.inject({ url: `/api/jobs/${id}`, headers: partner.tenant.auth })
    if (res.statusCode === 200) partner.mirror.jobs.set(id, res.json())
    else if (res.statusCode === 404) partner.mirror.jobs.delete(id)
    else throw new Error(`GET job ${res.statusCode} ${res.body}`)
  }
}

/**
 * Until every endpoint's position has passed the writers (it sees a transaction that began
 * after they committed: a dispatcher late under load would otherwise pass for done), nothing
 * is queued for them and nothing arrived for a while.
 */
async function settled (partners: Partner[]): Promise<void> {
  const ids = partners.map(p => p.endpointId)
  const [after] = await prisma.$queryRaw<Array<{ xid: string }>>`SELECT pg_current_xact_id()::text AS xid`
  let last = -1
  for (let i = 0; i < 400; i++) {
    const total = partners.reduce((n, p) => n + p.receiver.received.length, 0)
    const behind = await prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE id = ANY (${ids}::uuid[]) AND (position IS NULL OR NOT pg_visible_in_snapshot(${after!.xid}::xid8, (position->>'x')::pg_snapshot))`
    const queued = await prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhook-delivery' AND state IN ('created', 'retry', 'active') AND data->>'endpointId' = ANY (${ids}::text[])`
    if (total === last && behind[0]!.n === 0 && queued[0]!.n === 0) return
    last = total
    await sleep(250)
  }
  throw new Error('deliveries did not settle within 100 s')
}

t.test('mirrors kept from webhook events alone equal the database, while endpoints fail, pause and recover', { skip }, async t => {
  const pool = new pg.Pool({ connectionString: db.url, max: 4 })
  t.teardown(async () => { await pool.end() })
  const counts = { cases: 0, events: 0, failedAttempts: 0, writes: 0 }
  await checkProperty(t, 'webhook mirror', scenario, async ({ jobs: count, writers, failures, pauses }) => {
    counts.cases++
    const home = await createTenant(prisma)
    const away = await createTenant(prisma)
    const ids: string[] = []
    for (let i = 0; i < count; i++) {
      const job = await createJob(prisma, home, { questions: i % 3 })
      ids.push(job.id)
      if (i % 2 === 0) await createScreens(prisma, job.id, [{ status: 'completed', score: 40 + i, completedAt: new Date('2026-01-07T10:00:00Z') }])
    }
    const partners: Partner[] = []
    for (const [i, tenant] of [home, away].entries()) {
      const receiver = await startReceiver()
      let failed = 0
      receiver.answer = () => failed++ < failures[i]! ? { status: 500 } : { status: 204 }
      const endpoint = await makeEndpoint(app, tenant, receiver.url)
      receiver.secrets.push(endpoint.secret)
      partners.push({ tenant, receiver, endpointId: endpoint.id, mirror: await walkThenSync(app, tenant.auth) })
    }
    try {
      const patch = async (p: Partner, status: string): Promise<void> => { await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${p.endpointId}`, headers: p.tenant.auth, payload: { status } }) }
      for (const [i, p] of partners.entries()) if (pauses[i]!) await patch(p, 'disabled')
      await Promise.all(writers.map(async transactions => {
        for (const { ops, holdMs } of transactions) {
          const client = await pool.connect()
          try {
            await client.query('BEGIN')
            for (const o of ops) await apply(client, o, ids, home, away)
            await sleep(holdMs)
            await client.query('COMMIT')
            counts.writes += ops.length
          } catch (error) {
            await client.query('ROLLBACK')
            if (!['40P01', '40001', '23505', '23503'].includes((error as { code?: string }).code ?? '')) throw error
          } finally {
            client.release()
          }
        }
      }))
      for (const [i, p] of partners.entries()) if (pauses[i]!) await patch(p, 'enabled')
      await settled(partners)
      for (const p of partners) {
        if (p.receiver.received.some(r => r.type === 'sync.reset' || !r.verified)) throw new Error('a reset, or a delivery that does not verify')
        await applyEvents(p)
        counts.events += new Set(p.receiver.received.map(r => r.id)).size
        counts.failedAttempts += Math.min(failures[partners.indexOf(p)]!, p.receiver.received.length)
        const truth = await walkThenSync(app, p.tenant.auth)
        const sorted = (m: Mirror): unknown[] => [...m.jobs.entries()].sort(([a], [b]) => a < b ? -1 : 1)
        if (JSON.stringify(sorted(p.mirror)) !== JSON.stringify(sorted(truth))) {
          throw new Error(`the mirror of ${p === partners[0] ? 'home' : 'away'} differs:\n  mirror ${JSON.stringify(sorted(p.mirror))}\n  truth  ${JSON.stringify(sorted(truth))}`)
        }
      }
    } finally {
      for (const p of partners) {
        await app.inject({ method: 'DELETE', url: `/api/webhook_endpoints/${p.endpointId}`, headers: p.tenant.auth })
        await p.receiver.close()
      }
    }
  }, 40)
  t.comment(`figures: webhooks property: ${counts.cases} cases, ${counts.writes} writes, ${counts.events} events delivered, ${counts.failedAttempts} failed attempts retried; every mirror equal to a fresh walk`)
  t.ok(counts.cases >= 80, `${counts.cases} cases`)
})
