import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import {
  createScreeningClient, ScreeningApiError, verifyWebhook, WebhookVerificationError,
  type WebhookDelivery, type WebhookEndpoint, type WebhookEndpointCreated, type WebhookEvent, type WebhookVerificationReason,
} from '../../clients/typescript/src/index.js'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { startReceiver, type Received } from '../helpers/webhook-receiver.js'
import { sleep } from '../helpers/sleep.js'

// The SDK's webhook helpers (issue 41). verifyWebhook against deliveries signed by the
// `standardwebhooks` package (the specification's library, not the service's signing code),
// then the endpoint methods and page walks against a real app over HTTP, and a real delivery
// of the app verified with verifyWebhook, through a rotation of the secret.

const secret = 'whsec_' + Buffer.alloc(32, 1).toString('base64')
const otherSecret = 'whsec_' + Buffer.alloc(32, 2).toString('base64')
const event = { type: 'job.updated', timestamp: '2026-11-27T09:00:01.000Z', data: { id: '91c1b009-4099-5628-9d13-3aaeb0acf3e9' } } satisfies WebhookEvent
const body = JSON.stringify(event)

/** The three headers of a delivery of `payload` signed with `secrets` at `at`. */
function signed (secrets: string[], payload = body, at = new Date(), id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W'): Record<string, string> {
  const seconds = String(Math.floor(at.getTime() / 1000))
  return { 'webhook-id': id, 'webhook-timestamp': seconds, 'webhook-signature': secrets.map(s => new Webhook(s).sign(id, at, payload)).join(' ') }
}

async function refusal (t: Test, promise: Promise<unknown>): Promise<WebhookVerificationReason | undefined> {
  try {
    await promise
  } catch (error) {
    t.ok(error instanceof WebhookVerificationError, `a WebhookVerificationError: ${String(error)}`)
    return (error as WebhookVerificationError).reason
  }
  t.fail('verified, although it should not have')
  return undefined
}

t.test('verifyWebhook: a delivery signed by the standardwebhooks package verifies, with headers in any form, and returns its event', async t => {
  const headers = signed([secret])
  const verified: WebhookEvent = await verifyWebhook(secret, headers, body)
  t.same(verified, event)
  t.same(await verifyWebhook(secret, new Headers(headers), body), event, 'a Headers')
  const shouting = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.replace(/(^|-)w|(^|-)i|(^|-)t|(^|-)s/g, c => c.toUpperCase()), value]))
  t.ok(Object.keys(shouting).every(name => name !== name.toLowerCase()))
  t.same(await verifyWebhook(secret, shouting, body), event, 'an object with names in another case')
  t.same(await verifyWebhook(secret, headers, Buffer.from(body)), event, 'the body as bytes')
  const unicode = JSON.stringify({ ...event, note: 'Zürich – 東京' })
  t.same(await verifyWebhook(secret, signed([secret], unicode), Buffer.from(unicode)), JSON.parse(unicode), 'bytes of non-ASCII text')
  t.same(await verifyWebhook([otherSecret, secret], headers, body), event, 'any of several secrets')
})

t.test('verifyWebhook: refuses a changed body, a wrong secret, a stale or future timestamp, a missing header', async t => {
  const headers = signed([secret])
  t.equal(await refusal(t, verifyWebhook(secret, headers, body.replace('job.updated', 'job.deleted'))), 'no_matching_signature', 'a changed body')
  t.equal(await refusal(t, verifyWebhook(secret, headers, body + ' ')), 'no_matching_signature', 'a space added')
  t.equal(await refusal(t, verifyWebhook(otherSecret, headers, body)), 'no_matching_signature', 'another secret')
  t.equal(await refusal(t, verifyWebhook(secret, { ...headers, 'webhook-id': 'msg_other' }, body)), 'no_matching_signature', 'another webhook-id (it is signed)')
  const [, signature] = headers['webhook-signature']!.split(',')
  t.equal(await refusal(t, verifyWebhook(secret, { ...headers, 'webhook-signature': `v2,${signature}` }, body)), 'no_matching_signature', 'the right bytes under another version than v1')
  t.equal(await refusal(t, verifyWebhook(secret, { ...headers, 'webhook-signature': `v1,${signature!.slice(0, -8)}` }, body)), 'no_matching_signature', 'a prefix of the signature')

  const minutes = (n: number): Date => new Date(Date.now() + n * 60_000)
  t.equal(await refusal(t, verifyWebhook(secret, signed([secret], body, minutes(-6)), body)), 'timestamp_out_of_tolerance', 'signed 6 minutes ago')
  t.equal(await refusal(t, verifyWebhook(secret, signed([secret], body, minutes(6)), body)), 'timestamp_out_of_tolerance', 'signed 6 minutes ahead')
  t.same(await verifyWebhook(secret, signed([secret], body, minutes(-4)), body), event, '4 minutes ago is within the default 5')
  t.equal(await refusal(t, verifyWebhook(secret, signed([secret], body, minutes(-2)), body, { toleranceSeconds: 60 })), 'timestamp_out_of_tolerance', '2 minutes ago with a tolerance of 60 s')
  const stale = signed([secret], body, minutes(-6))
  t.equal(await refusal(t, verifyWebhook(secret, { ...stale, 'webhook-timestamp': headers['webhook-timestamp']! }, body)), 'no_matching_signature', 'a stale delivery with a fresh timestamp: the timestamp is signed')
  t.equal(await refusal(t, verifyWebhook(secret, { ...headers, 'webhook-timestamp': '1.7e9' }, body)), 'invalid_timestamp')

  for (const name of Object.keys(headers)) {
    const { [name]: _, ...without } = headers
    t.equal(await refusal(t, verifyWebhook(secret, without, body)), 'missing_header', `without ${name}`)
    t.equal(await refusal(t, verifyWebhook(secret, { ...without, [name]: '' }, body)), 'missing_header', `${name} empty`)
  }
  t.equal(await refusal(t, verifyWebhook(secret, signed([secret], 'not json'), 'not json')), 'invalid_body', 'signed, but not JSON')
  await t.rejects(verifyWebhook('whsec_', headers, body), TypeError, 'an empty secret is the receiver\'s mistake: a TypeError')
  await t.rejects(verifyWebhook([], headers, body), TypeError, 'so is no secret at all')
})

t.test('verifyWebhook: a rotation\'s two signatures verify with either secret, and not with a third', async t => {
  const headers = signed([otherSecret, secret])
  t.equal(headers['webhook-signature']!.split(' ').length, 2)
  t.same(await verifyWebhook(secret, headers, body), event, 'the previous secret')
  t.same(await verifyWebhook(otherSecret, headers, body), event, 'the new one')
  t.same(await verifyWebhook([otherSecret, secret], headers, body), event, 'both')
  const third = 'whsec_' + Buffer.alloc(32, 3).toString('base64')
  t.equal(await refusal(t, verifyWebhook(third, headers, body)), 'no_matching_signature')
})

// The app, over HTTP, as the SDK reaches a deployed service; receivers on 127.0.0.1 only.
const { app, prisma } = await buildTestApp(t, { env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', WEBHOOK_DISPATCH_INTERVAL_MS: '50' } })
await app.listen({ host: '127.0.0.1', port: 0 })
const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

t.test('listAllWebhookEndpoints: every endpoint made through the SDK, page after page', async t => {
  const tenant = await createTenant(prisma)
  const requests: string[] = []
  const api = createScreeningClient({ baseUrl, apiKey: tenant.key, fetch: async (input, init) => { requests.push(input instanceof Request ? input.url : String(input)); return await fetch(input, init) } })
  const made: WebhookEndpointCreated[] = []
  for (let i = 1; i <= 5; i++) made.push(await api.createWebhookEndpoint({ url: `http://127.0.0.1:9/hooks/${i}`, description: `endpoint ${i}`, events: ['job.updated'] }))
  t.ok(made.every(e => e.secret.startsWith('whsec_') && e.status === 'enabled'))

  requests.length = 0
  const walked: WebhookEndpoint[] = []
  for await (const endpoint of api.listAllWebhookEndpoints({ limit: 2 })) walked.push(endpoint)
  t.equal(requests.length, 3, 'three pages of 2 for 5 endpoints')
  t.ok(requests.slice(1).every(url => new URL(url).searchParams.has('cursor')), 'each page after the first asks for its cursor')
  t.same(walked.map(e => e.id).sort(), made.map(e => e.id).sort(), 'each endpoint, once')
  t.same(walked.map(e => e.id), (await api.listWebhookEndpoints({ limit: 100 })).data.map(e => e.id), 'in the order of one page of 100')
  t.match(walked.find(e => e.id === made[2]!.id), { url: 'http://127.0.0.1:9/hooks/3', description: 'endpoint 3', events: ['job.updated'], status: 'enabled' })

  await api.deleteWebhookEndpoint(made[0]!.id)
  const left: string[] = []
  for await (const endpoint of api.listAllWebhookEndpoints()) left.push(endpoint.id)
  t.equal(left.length, 4, 'a deleted endpoint is no longer listed')
  const other = createScreeningClient({ baseUrl, apiKey: (await createTenant(prisma)).key })
  const theirs: string[] = []
  for await (const endpoint of other.listAllWebhookEndpoints()) theirs.push(endpoint.id)
  t.same(theirs, [], 'another organization walks none of them')
})

t.test('a POST whose answer is lost: the SDK retries it with the same Idempotency-Key, and the endpoint is made once (issue 55)', async t => {
  const tenant = await createTenant(prisma)
  const keys: string[] = []
  let lost = 0
  // The request reaches the server and is done there; its answer never reaches the client,
  // which sees a 503 (a proxy's, say) and retries after its Retry-After.
  const api = createScreeningClient({
    baseUrl,
    apiKey: tenant.key,
    retry: { baseDelayMs: 10 },
    fetch: async (input, init) => {
      const request = new Request(input, init)
      const answer = await fetch(request)
      if (request.method !== 'POST') return answer
      keys.push(request.headers.get('idempotency-key') ?? '')
      if (lost++ > 0) return answer
      await answer.body?.cancel()
      return new Response('{}', { status: 503, headers: { 'retry-after': '0', 'content-type': 'application/json' } })
    },
  })
  const made = await api.createWebhookEndpoint({ url: 'http://127.0.0.1:9/hooks/once' })
  t.equal(keys.length, 2, 'sent twice')
  t.match(keys[0], /^[0-9a-f-]{36}$/, 'with a key of its own making')
  t.equal(keys[1], keys[0], 'the same key both times')
  t.equal(await prisma.webhookEndpoint.count({ where: { organizationId: tenant.organizationId } }), 1, 'made once')
  t.equal((await prisma.webhookEndpoint.findFirstOrThrow({ where: { organizationId: tenant.organizationId } })).id, made.id, 'and the answer is of that endpoint, its secret the one it signs with')
  const again = await api.createWebhookEndpoint({ url: 'http://127.0.0.1:9/hooks/once' }, { idempotencyKey: keys[0] })
  t.equal(again.id, made.id, 'the key given back by hand: the same answer')
  t.not((await api.createWebhookEndpoint({ url: 'http://127.0.0.1:9/hooks/once' })).id, made.id, 'a new call: a new key, a new endpoint')
})

t.test('a real delivery, verified with verifyWebhook; its record walked with listAllWebhookDeliveries; a rotation; a redelivery', async t => {
  const tenant = await createTenant(prisma)
  const api = createScreeningClient({ baseUrl, apiKey: tenant.key })
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  const endpoint = await api.createWebhookEndpoint({ url: receiver.url })
  receiver.secrets.push(endpoint.secret)

  const job = await createJob(prisma, tenant)
  const ofJob = (r: Received): boolean => r.jobId === job.id
  t.ok(await receiver.until(r => r.some(ofJob)), 'the job\'s creation is delivered')
  const first = receiver.received.find(ofJob)!
  const verified: WebhookEvent = await verifyWebhook(endpoint.secret, first.headers, first.body)
  t.match(verified, { type: 'job.updated', data: { id: job.id } })
  t.ok(first.verified, 'the standardwebhooks package agrees')
  t.equal(await refusal(t, verifyWebhook(otherSecret, first.headers, first.body)), 'no_matching_signature', 'and another secret does not verify it')

  const rotated = await api.rotateWebhookSecret(endpoint.id, { grace_seconds: 3600 })
  t.not(rotated.secret, endpoint.secret)
  t.ok(rotated.previous_secret_expires_at !== null, 'the previous secret signs for the grace')
  await prisma.job.update({ where: { id: job.id }, data: { title: 'retitled' } })
  t.ok(await receiver.until(r => r.filter(ofJob).length >= 2), 'the change is delivered')
  const second = receiver.received.filter(ofJob)[1]!
  t.equal(String(second.headers['webhook-signature']).split(' ').length, 2, 'signed with both secrets during the grace')
  for (const secrets of [[rotated.secret], [endpoint.secret], [rotated.secret, endpoint.secret]]) {
    t.match(await verifyWebhook(secrets, second.headers, second.body), { type: 'job.updated', data: { id: job.id } })
  }

  // The receiver is answered before the attempt is recorded: wait for both records.
  let deliveries: WebhookDelivery[] = []
  for (let tries = 0; tries < 200 && deliveries.filter(d => d.outcome === 'delivered').length < 2; tries++) {
    deliveries = []
    for await (const delivery of api.listAllWebhookDeliveries(endpoint.id, { limit: 1 })) deliveries.push(delivery)
    await sleep(25)
  }
  t.same(new Set(deliveries.map(d => d.event_id)), new Set(receiver.received.map(r => r.id)), 'one record per webhook-id received, walked one page at a time')
  t.ok(deliveries.every(d => d.outcome === 'delivered' && d.status_code === 204))

  const before = receiver.received.length
  t.same(await api.redeliverWebhookEvent(endpoint.id, deliveries.find(d => d.event_id === first.id)!.id), { scheduled: 1, skipped: 0, more: false })
  t.ok(await receiver.until(r => r.slice(before).some(x => x.id === first.id)), 'redelivered with the same webhook-id: a receiver deduplicating on it ignores it')
  const again = receiver.received.slice(before).find(x => x.id === first.id)!
  t.match(await verifyWebhook(rotated.secret, again.headers, again.body), { data: { id: job.id } })
  t.same(await api.recoverWebhookEvents(endpoint.id, new Date(Date.now() - 3600_000)), { scheduled: 0, skipped: 0, more: false }, 'nothing failed to recover')

  await api.deleteWebhookEndpoint(endpoint.id)
  const gone = await api.getWebhookEndpoint(endpoint.id).then(() => undefined, (error: unknown) => error)
  t.ok(gone instanceof ScreeningApiError && gone.code === 'not_found', 'deleted: not_found, a typed error')
})
