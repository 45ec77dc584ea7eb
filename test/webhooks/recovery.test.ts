import t, { type Test } from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { until } from '../helpers/until.js'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js'
import { deliveriesOf, makeEndpoint } from '../helpers/webhooks.js'
import { sleep } from '../helpers/sleep.js'
import { RECOVER_MAX } from '../../src/webhooks/recovery.js'

// recover and redeliver are idempotent (issue 55, finding 3): calls at once, or a call
// retried, send each webhook-id at most once more, and a call's work is bounded and said. The
// review's shape: 20 events given up, 10 recovers at once (it saw 200 POSTs, each id 10 times).

const { app, prisma } = await buildTestApp(t, { env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', WEBHOOK_RETRY_DELAYS: '50ms', WEBHOOK_DISPATCH_INTERVAL_MS: '100' } })

/** An endpoint of a new organization whose `count` job events were all given up (two attempts, both 500). */
async function givenUp (t: Test, count: number) {
  const tenant = await createTenant(prisma)
  const receiver: Receiver = await startReceiver()
  t.teardown(receiver.close)
  receiver.answer = () => ({ status: 500 })
  const endpoint = await makeEndpoint(app, tenant, receiver.url)
  receiver.secrets.push(endpoint.secret)
  const jobs = await Promise.all(Array.from({ length: count }, async () => await createJob(prisma, tenant)))
  const done = async (): Promise<boolean> => (await deliveriesOf(app, tenant, endpoint.id)).filter(d => d.attempt === 2 && d.next_attempt_at === null).length >= count
  await until(`${count} events, each given up after its two attempts`, done, 20_000, 100)
  return { tenant, receiver, endpoint, jobs }
}
t.test('10 recovers at once over 20 given-up events: each event sent once more, one job queued, and the answers add up', async t => {
  const { tenant, receiver, endpoint } = await givenUp(t, 20)
  const before = receiver.received.length
  // Slow answers: the recovered events are still queued or being sent while the others ask.
  receiver.answer = () => ({ status: 204, delayMs: 300 })
  const recoveredAt = new Date()
  const calls = await Promise.all(Array.from({ length: 10 }, async () => await app.inject({ method: 'POST', url: `/api/webhook_endpoints/${endpoint.id}/recover`, headers: tenant.auth, payload: { since: '2026-01-01T00:00:00Z' } })))
  t.same(calls.map(c => c.statusCode), Array(10).fill(202))
  const answers = calls.map(c => c.json() as { scheduled: number, skipped: number, more: boolean })
  t.equal(answers.reduce((n, a) => n + a.scheduled, 0), 20, `20 scheduled in all (${answers.map(a => a.scheduled).join(', ')})`)
  t.ok(answers.every(a => a.scheduled + a.skipped === 20), `each call accounts for the 20: scheduled by it, or skipped as scheduled already (${answers.map(a => `${a.scheduled}+${a.skipped}`).join(', ')})`)
  t.ok(answers.every(a => !a.more), 'nothing more to recover')
  t.ok(await receiver.until(r => r.length - before >= 20, 15_000), 'the 20 arrive')
  await sleep(1000)
  const again = receiver.received.slice(before)
  const perId = new Map<string, number>()
  for (const r of again) perId.set(r.id, (perId.get(r.id) ?? 0) + 1)
  t.equal(again.length, 20, `20 POSTs after the recovers, not ${again.length}`)
  t.ok([...perId.values()].every(n => n === 1), 'each webhook-id once')
  t.ok(again.every(r => r.verified), 'signed')
  const queued = await prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhook-delivery' AND group_id = ${endpoint.id} AND created_on >= ${recoveredAt}`
  t.equal(queued[0]!.n, 1, 'the queue\'s table grew by one job (the 20 events), not by ten')
})

t.test('5 redelivers of one attempt at once: sent once more; once delivered, redelivering that attempt again is skipped', async t => {
  const { tenant, receiver, endpoint } = await givenUp(t, 1)
  receiver.answer = () => ({ status: 204, delayMs: 200 })
  const attempt = (await deliveriesOf(app, tenant, endpoint.id)).find(d => d.attempt === 2)!
  const before = receiver.received.length
  const redeliver = async () => await app.inject({ method: 'POST', url: `/api/webhook_endpoints/${endpoint.id}/deliveries/${attempt.id}/redeliver`, headers: tenant.auth })
  const answers = (await Promise.all(Array.from({ length: 5 }, redeliver))).map(r => r.json() as { scheduled: number, skipped: number })
  t.same(answers.map(a => a.scheduled).sort(), [0, 0, 0, 0, 1], 'one scheduled')
  t.ok(await receiver.until(r => r.length > before, 10_000))
  await until('the redelivery recorded', async () => (await deliveriesOf(app, tenant, endpoint.id)).some(d => d.outcome === 'delivered'), 10_000, 50)
  await sleep(300)
  t.equal(receiver.received.length - before, 1, 'the event was sent once more')
  t.match((await redeliver()).json(), { scheduled: 0, skipped: 1 }, 'that attempt again: skipped, an attempt after it delivered the event')
  const delivered = (await deliveriesOf(app, tenant, endpoint.id)).find(d => d.outcome === 'delivered')!
  t.match((await app.inject({ method: 'POST', url: `/api/webhook_endpoints/${endpoint.id}/deliveries/${delivered.id}/redeliver`, headers: tenant.auth })).json(), { scheduled: 1, skipped: 0 }, 'the delivered attempt itself: sent again, on request')
})

t.test(`a recover schedules ${RECOVER_MAX} events at most and says there are more; the same call again schedules the rest`, async t => {
  const { tenant, receiver, endpoint } = await givenUp(t, 1)
  // Held answers: what is scheduled stays queued or in flight during the test.
  receiver.answer = () => ({ status: 204, delayMs: 20_000 })
  await prisma.$executeRaw`
    INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, job_id, event_at, attempt, outcome, error, attempted_at)
    SELECT ${endpoint.id}::uuid, 'msg_bulk' || i, 'job.updated', gen_random_uuid(), now(), 8, 'failed', 'status 500', now()
    FROM generate_series(1, ${RECOVER_MAX + 9}) i`
  const recover = async () => (await app.inject({ method: 'POST', url: `/api/webhook_endpoints/${endpoint.id}/recover`, headers: tenant.auth, payload: { since: '2026-01-01T00:00:00Z' } })).json() as { scheduled: number, skipped: number, more: boolean }
  const first = await recover()
  t.match(first, { scheduled: RECOVER_MAX, more: true }, `${RECOVER_MAX} scheduled, and more`)
  const second = await recover()
  t.match(second, { scheduled: 10, skipped: RECOVER_MAX, more: false }, 'then the other 10 (the first call\'s, still queued, skipped)')
  const third = await recover()
  t.match(third, { scheduled: 0, skipped: RECOVER_MAX + 10, more: false }, 'then nothing')
})
