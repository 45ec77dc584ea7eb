import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createTenant } from '../helpers/fixtures.js'
import { startReceiver } from '../helpers/webhook-receiver.js'
import { deliveriesOf, makeEndpoint } from '../helpers/webhooks.js'
import { sleep } from '../helpers/sleep.js'

// A test event on request (issue 55): POST …/{id}/test sends a signed `webhook.test` event at
// once, answers how the attempt went, and records it with the deliveries; never retried, never
// counted toward disabling. Receivers verify with the `standardwebhooks` package.

const { app, prisma } = await buildTestApp(t, { env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', REQUEST_TIMEOUT_MS: '2000', WEBHOOK_RETRY_DELAYS: '50ms' } })
const test = async (tenant: { auth: { authorization: string } }, id: string, key?: string) =>
  await app.inject({ method: 'POST', url: `/api/webhook_endpoints/${id}/test`, headers: { ...tenant.auth, ...(key !== undefined ? { 'idempotency-key': key } : {}) }, payload: {} })

t.test('a new endpoint checked at once: a signed webhook.test, the attempt answered and recorded', async t => {
  const acme = await createTenant(prisma)
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  const started = performance.now()
  const endpoint = await makeEndpoint(app, acme, receiver.url)
  receiver.secrets.push(endpoint.secret)
  const res = await test(acme, endpoint.id)
  const took = Math.round(performance.now() - started)
  t.equal(res.statusCode, 200)
  const answer = res.json() as { event_id: string, delivery_id: string, delivered: boolean, status_code: number, error: string | null, duration_ms: number }
  t.match(answer, { delivered: true, status_code: 204, error: null, event_id: /^msg_test_/ })
  const received = receiver.received.find(r => r.id === answer.event_id)
  t.ok(received?.verified, 'received, and it verifies with the standardwebhooks package')
  t.same(JSON.parse(received!.body), { type: 'webhook.test', timestamp: JSON.parse(received!.body).timestamp, data: { id: endpoint.id } }, 'a thin body naming the endpoint')
  const recorded = (await deliveriesOf(app, acme, endpoint.id)).find(d => d.id === answer.delivery_id)
  t.match(recorded, { event_id: answer.event_id, event_type: 'webhook.test', job_id: null, outcome: 'delivered', status_code: 204, next_attempt_at: null }, 'recorded with the deliveries')
  t.ok(took < 60_000, `made and checked in ${took} ms`)
  t.comment(`figures: test event: a new endpoint made and its test event answered in ${took} ms`)
})

t.test('a failing endpoint: the failure answered, not retried, not counted toward disabling; a silent one within the request\'s bound', async t => {
  const acme = await createTenant(prisma)
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  const endpoint = await makeEndpoint(app, acme, receiver.url)
  receiver.answer = () => ({ status: 500 })
  t.match((await test(acme, endpoint.id)).json(), { delivered: false, status_code: 500, error: 'status 500' })
  await sleep(500)
  t.equal(receiver.received.length, 1, 'not retried')
  t.equal((await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).failingSince, null, 'not a failure of its deliveries')
  receiver.answer = () => ({ status: 204, delayMs: 10_000 })
  const started = performance.now()
  const silent = await test(acme, endpoint.id)
  t.equal(silent.statusCode, 200, 'answered, not a 503 of the request\'s timeout')
  t.match(silent.json(), { delivered: false, status_code: null, error: /no answer within 1000 ms/ })
  t.ok(performance.now() - started < 2000, 'within REQUEST_TIMEOUT_MS')
})

t.test('retried with an Idempotency-Key: the first answer, nothing sent again; disabled: 400; another organization\'s: 404', async t => {
  const acme = await createTenant(prisma)
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  const endpoint = await makeEndpoint(app, acme, receiver.url)
  const first = await test(acme, endpoint.id, 'check-1')
  const again = await test(acme, endpoint.id, 'check-1')
  t.equal(again.body, first.body)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(receiver.received.length, 1, 'sent once')
  t.equal((await test(await createTenant(prisma), endpoint.id)).statusCode, 404)
  await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${endpoint.id}`, headers: acme.auth, payload: { status: 'disabled' } })
  t.equal((await test(acme, endpoint.id)).statusCode, 400, 'disabled: enable it first')
  t.equal(receiver.received.length, 1)
})
