import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { webhookEventProblems } from '../helpers/contract.js'
import { createJob, createTenant, keyWithScopes } from '../helpers/fixtures.js'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js'
import { makeEndpoint } from '../helpers/webhooks.js'
import { sleep } from '../helpers/sleep.js'
import { setEndpointStatus } from '../../src/webhooks/admin.js'

// Notices before an endpoint stops (issue 57, part 4), on both databases: an endpoint failing
// WEBHOOK_FAILING_AFTER attempts in a row makes its organization's other enabled endpoints be
// sent one webhook_endpoint.failing a spell; a disabling by 410 or by an operator, one
// webhook_endpoint.disabled; a partner's own disabling, none. Each verified with the
// `standardwebhooks` package (the receiver's), never sent to the endpoint itself or to
// another organization.

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789'
const env = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', WEBHOOK_RETRY_DELAYS: '50ms,50ms,50ms,50ms,50ms,50ms,50ms,50ms', WEBHOOK_FAILING_AFTER: '3', METRICS_TOKEN, WEBHOOK_DISPATCH_INTERVAL_MS: '200' }
const { app, prisma } = await buildTestApp(t, { env })

async function receiverFor (t: { teardown: (fn: () => unknown) => void }): Promise<Receiver> {
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  return receiver
}
const notices = (receiver: Receiver, type: string): Array<{ verified: boolean, body: { type: string, data: Record<string, unknown> } }> =>
  receiver.received.filter(r => r.type === type).map(r => ({ verified: r.verified, body: JSON.parse(r.body) }))
const noticeCount = async (type: string): Promise<number> => {
  const body = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body
  return Number(new RegExp(`^webhook_notices_total\\{type="${type.replace('.', '\\.')}"\\} (\\d+)$`, 'm').exec(body)?.[1] ?? 0)
}

t.test('an endpoint failing: one webhook_endpoint.failing a spell to its organization\'s other endpoints, signed', async t => {
  const tenant = await createTenant(prisma)
  const outsider = await createTenant(prisma)
  const [failing, sibling, theirs] = [await receiverFor(t), await receiverFor(t), await receiverFor(t)]
  failing.answer = () => ({ status: 500 })
  const failingEndpoint = await makeEndpoint(app, tenant, failing.url)
  sibling.secrets.push((await makeEndpoint(app, tenant, sibling.url)).secret)
  theirs.secrets.push((await makeEndpoint(app, outsider, theirs.url)).secret)
  const before = await noticeCount('webhook_endpoint.failing')

  await createJob(prisma, tenant)
  t.ok(await sibling.until(r => r.some(x => x.type === 'webhook_endpoint.failing'), 20_000), 'the sibling is told')
  t.ok(await failing.until(r => r.length >= 6, 20_000), `the failing endpoint failed on (${failing.received.length} attempts)`)
  await sleep(600) // runs enough to send a second notice, were one sent
  const told = notices(sibling, 'webhook_endpoint.failing')
  t.equal(told.length, 1, 'one notice for the spell, however long it lasts')
  t.ok(told[0]!.verified, 'signed: it verifies with the standardwebhooks package')
  t.match(told[0]!.body.data, { id: failingEndpoint.id, origin: new URL(failing.url).origin, failures: Number, failing_since: /^\d{4}-\d\d-\d\dT/ })
  t.notOk(JSON.stringify(told[0]!.body).includes('/hooks'), 'the origin alone, never the URL\'s path')
  t.ok(Number(told[0]!.body.data.failures) >= 3, `after WEBHOOK_FAILING_AFTER failures (${String(told[0]!.body.data.failures)})`)
  t.notOk(failing.received.some(r => r.type.startsWith('webhook_endpoint.')), 'never to the endpoint it is about')
  t.equal(theirs.received.filter(r => r.type.startsWith('webhook_endpoint.')).length, 0, 'never to another organization')
  t.equal(await noticeCount('webhook_endpoint.failing') - before, 1, 'webhook_notices_total counts it once')

  // A delivery ends the spell; the next spell is told again.
  failing.answer = () => ({ status: 204 })
  const delivered = failing.received.length
  await createJob(prisma, tenant)
  t.ok(await failing.until(r => r.length > delivered, 10_000), 'the endpoint answers again')
  await sleep(400)
  failing.answer = () => ({ status: 500 })
  await createJob(prisma, tenant)
  t.ok(await sibling.until(() => notices(sibling, 'webhook_endpoint.failing').length === 2, 20_000), 'a second spell: a second notice')
  t.ok(notices(sibling, 'webhook_endpoint.failing').every(n => n.verified))
  t.ok(notices(sibling, 'webhook_endpoint.failing').every(n => webhookEventProblems(n.body).length === 0), 'each body as the document\'s WebhookEvent says')
})

t.test('an endpoint disabled by a 410 or an operator: webhook_endpoint.disabled with the reason; by its partner: nothing', async t => {
  const tenant = await createTenant(prisma)
  const [gone, sibling, byOperator, byPartner] = [await receiverFor(t), await receiverFor(t), await receiverFor(t), await receiverFor(t)]
  gone.answer = () => ({ status: 410 })
  const maker = await keyWithScopes(prisma, tenant, ['*'])
  const goneEndpoint = await makeEndpoint(app, maker, gone.url)
  sibling.secrets.push((await makeEndpoint(app, tenant, sibling.url)).secret)
  const operatorEndpoint = await makeEndpoint(app, tenant, byOperator.url)
  const partnerEndpoint = await makeEndpoint(app, tenant, byPartner.url)

  await createJob(prisma, tenant)
  t.ok(await sibling.until(() => notices(sibling, 'webhook_endpoint.disabled').length >= 1, 20_000), 'told of the 410')
  t.match(notices(sibling, 'webhook_endpoint.disabled'), [{ verified: true, body: { data: { id: goneEndpoint.id, reason: 'gone', origin: new URL(gone.url).origin } } }])
  // Each recipient's notice is a job of its own: the others have theirs before one is disabled.
  t.ok(await byOperator.until(r => r.some(x => x.type === 'webhook_endpoint.disabled'), 20_000) && await byPartner.until(r => r.some(x => x.type === 'webhook_endpoint.disabled'), 20_000), 'every sibling told of the 410')

  t.ok(await setEndpointStatus(app.database, operatorEndpoint.id, false), 'an operator disables one (npm run admin -- disable-endpoint)')
  t.ok(await sibling.until(() => notices(sibling, 'webhook_endpoint.disabled').length >= 2, 20_000), 'told of the operator')
  t.match(notices(sibling, 'webhook_endpoint.disabled')[1], { verified: true, body: { data: { id: operatorEndpoint.id, reason: 'operator' } } })
  t.ok(await byPartner.until(() => notices(byPartner, 'webhook_endpoint.disabled').length >= 2, 20_000), 'the partner\'s endpoint told too, while enabled')

  t.equal((await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${partnerEndpoint.id}`, headers: tenant.auth, payload: { status: 'disabled' } })).statusCode, 200)
  await sleep(1000)
  t.equal(notices(sibling, 'webhook_endpoint.disabled').length, 2, 'the partner\'s own disabling: no notice')
  const about = (receiver: Receiver): unknown[] => notices(receiver, 'webhook_endpoint.disabled').map(n => n.body.data.id)
  t.same(about(byPartner), [goneEndpoint.id, operatorEndpoint.id], 'an enabled sibling is told of both; nothing of its own disabling')
  t.same(about(byOperator), [goneEndpoint.id], 'told of the 410 while enabled; nothing after it was disabled')
  t.notOk(about(gone).length > 0, 'nothing to the endpoint that answered 410')
  t.ok(notices(sibling, 'webhook_endpoint.disabled').every(n => webhookEventProblems(n.body).length === 0), 'each body as the document\'s WebhookEvent says')
})

t.test('GET /api/webhook_event_types: the catalogue the document\'s webhooks are made of', async t => {
  const tenant = await createTenant(prisma)
  const res = await app.inject({ url: '/api/webhook_event_types', headers: tenant.auth })
  t.equal(res.statusCode, 200)
  const doc = (await app.inject({ url: '/openapi.json' })).json() as { webhooks: Record<string, { post: { summary: string } }> }
  const listed = (res.json() as { data: Array<{ type: string, summary: string, subscribable: boolean }> }).data
  t.same(listed.map(e => e.type), Object.keys(doc.webhooks), 'the same types, in the same order')
  t.ok(listed.every(e => doc.webhooks[e.type]!.post.summary === e.summary), 'the same summaries')
  t.same(listed.filter(e => e.subscribable).map(e => e.type), ['job.updated', 'job.deleted'], 'the types an endpoint chooses')
  t.equal((await app.inject({ url: '/api/webhook_event_types', headers: (await keyWithScopes(prisma, tenant, ['jobs:read'])).auth })).statusCode, 403, 'needs webhooks:read')
})
