import { PassThrough } from 'node:stream'
import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createTenant, keyWithScopes } from '../helpers/fixtures.js'
import { until } from '../helpers/until.js'
import { startReceiver } from '../helpers/webhook-receiver.js'
import { makeEndpoint } from '../helpers/webhooks.js'
import { sleep } from '../helpers/sleep.js'

// What an operator sees of webhooks (issue 57, parts 3 and 5), on both databases: a failed
// attempt is one warn line with the endpoint, the status and the next attempt's time; a
// deleted or disabled endpoint leaves webhook_oldest_undelivered_seconds at once.

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789'
type Line = Record<string, unknown>
const lines: Line[] = []
const logStream = new PassThrough()
logStream.on('data', (chunk: Buffer) => { for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Line) })
// Retries an hour away: the failed events wait in the queue for the whole test.
const env = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', WEBHOOK_RETRY_DELAYS: '1h,1h', METRICS_TOKEN, WEBHOOK_DISPATCH_INTERVAL_MS: '200' }
const { app, prisma } = await buildTestApp(t, { env, logStream })

const gauge = async (): Promise<Map<string, number>> => {
  const body = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body
  return new Map([...body.matchAll(/^webhook_oldest_undelivered_seconds\{endpoint="([^"]+)"\} ([0-9.e+-]+)$/gm)].map(m => [m[1]!, Number(m[2])]))
}
const failureLines = (endpointId: string): Line[] => lines.filter(l => l.level === 40 && l.endpoint === endpointId && /failed/.test(String(l.msg)))

t.test('a failed attempt: one warn line with the endpoint, the status and the next attempt; a deleted or disabled endpoint leaves the undelivered age at once', async t => {
  const tenant = await createTenant(prisma)
  const receivers = [await startReceiver(), await startReceiver()]
  for (const receiver of receivers) { t.teardown(receiver.close); receiver.answer = () => ({ status: 500 }) }
  const [deleted, disabled] = [await makeEndpoint(app, tenant, receivers[0]!.url), await makeEndpoint(app, tenant, receivers[1]!.url)]
  const before = Date.now()
  await createJob(prisma, tenant)
  await until('both endpoints failed once', async () => failureLines(deleted.id).length > 0 && failureLines(disabled.id).length > 0, 20_000, 50)

  const [line] = failureLines(deleted.id)
  t.equal(failureLines(deleted.id).length, 1, 'one line for the one event\'s failed attempt')
  t.match(line, { status: 500, error: 'status 500', events: 1, event_ids: [/^msg_/] })
  const next = Date.parse(String(line!.next_attempt_at))
  t.ok(next >= before + 3_600_000 && next <= Date.now() + 1.2 * 3_600_000, `the next attempt's time, an hour or so away (${String(line!.next_attempt_at)})`)
  t.match(line!.time, /^\d{4}-\d\d-\d\dT/, 'an ISO 8601 time')

  const waiting = await gauge()
  t.ok(waiting.has(deleted.id) && waiting.has(disabled.id), 'both endpoints in the undelivered age while their retries wait')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/webhook_endpoints/${deleted.id}`, headers: tenant.auth })).statusCode, 204)
  t.equal((await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${disabled.id}`, headers: tenant.auth, payload: { status: 'disabled' } })).statusCode, 200)
  const after = await gauge()
  t.notOk(after.has(deleted.id), 'the deleted endpoint: gone from the gauge at the next scrape')
  t.notOk(after.has(disabled.id), 'the disabled endpoint: gone too')
  const queued = await prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhook-delivery' AND state = 'created' AND data->>'endpointId' IN (${deleted.id}, ${disabled.id})`
  t.ok(queued[0]!.n >= 1, `their retries still queued (${queued[0]!.n}): the gauge, not the queue, left them`)
})

t.test('an endpoint disabled because its maker key was revoked: a warn line that says why', async t => {
  const tenant = await createTenant(prisma)
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  const maker = await keyWithScopes(prisma, tenant, ['*'])
  const endpoint = await makeEndpoint(app, maker, receiver.url)
  await prisma.apiKey.update({ where: { id: maker.apiKeyId }, data: { revokedAt: new Date() } })
  await createJob(prisma, tenant)
  await until('the endpoint disabled', async () => (await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).status === 'disabled', 20_000, 50)
  await until('its line logged', () => lines.some(l => l.endpoint === endpoint.id && l.reason === 'key_revoked'), 5_000)
  t.match(lines.filter(l => l.endpoint === endpoint.id && l.reason === 'key_revoked'), [{ level: 40, msg: /disabled: the key that made it is revoked/ }], 'one warn line, with the reason')
})

t.test('a batch of failed attempts alike is one warn line, with the time its retry is due', async t => {
  const tenant = await createTenant(prisma)
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  receiver.answer = () => ({ status: 503 })
  const endpoint = await makeEndpoint(app, tenant, receiver.url)
  // Twelve jobs in one statement: one change each in one transaction, one batch.
  await prisma.$executeRaw`
    INSERT INTO jobs (organization_id, user_id, title, company_name, description, slug, share_token)
    SELECT ${tenant.organizationId}::uuid, ${tenant.userId}::uuid, 'Batch ' || n, 'C', 'D', 'batch-' || gen_random_uuid(), md5(n::text || random()) || md5(random()::text)
    FROM generate_series(1, 12) n`
  await until('the batch failed', async () => failureLines(endpoint.id).length > 0 && receiver.received.length >= 12, 20_000, 50)
  await sleep(300)
  const mine = failureLines(endpoint.id)
  t.equal(mine.length, 1, `one line for the batch (${mine.map(l => String(l.events)).join(', ')} events)`)
  t.match(mine[0], { status: 503, events: 12 })
  t.equal((mine[0]!.event_ids as string[]).length, 10, 'the first 10 event ids')
  const recorded = await prisma.webhookDelivery.findMany({ where: { endpointId: endpoint.id }, select: { nextAttemptAt: true } })
  t.equal(new Set(recorded.map(r => r.nextAttemptAt?.toISOString())).size, 1, 'every attempt recorded with the one time its retry is due')
  t.equal(recorded[0]!.nextAttemptAt?.toISOString(), mine[0]!.next_attempt_at, 'the time the line says')
})
