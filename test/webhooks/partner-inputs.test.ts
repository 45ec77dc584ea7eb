import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { startReceiver } from '../helpers/webhook-receiver.js'
import { makeEndpoint } from '../helpers/webhooks.js'
import { setEndpointStatus } from '../../src/webhooks/admin.js'

// What a partner with an ordinary webhooks:write key may send, as the review of issue 55 sent
// it: every malformed value a 400 in the error shape (never a 500, never stored as something
// else), on both databases.

const { app, prisma, db } = await buildTestApp(t, { env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' } })
const acme = await createTenant(prisma)
const url = 'http://127.0.0.1:9/hooks'
const send = async (method: 'POST' | 'PATCH' | 'GET', path: string, payload?: string) => await app.inject({
  method,
  url: path,
  headers: { ...acme.auth, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
  ...(payload !== undefined ? { payload } : {}),
})

t.test('recover: a `since` outside years 0001 to 9999 (in UTC) is a 400 on body/since, not a 500', async t => {
  const endpoint = await makeEndpoint(app, acme, url)
  for (const since of ['0000-12-31T23:59:59Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00', '0000-01-01T00:00:00Z']) {
    const res = await send('POST', `/api/webhook_endpoints/${endpoint.id}/recover`, JSON.stringify({ since }))
    t.equal(res.statusCode, 400, since)
    t.match(res.json(), { code: 'invalid_request', details: [{ path: 'body/since' }] })
  }
  for (const since of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-11-27T00:00:00+05:30']) {
    t.equal((await send('POST', `/api/webhook_endpoints/${endpoint.id}/recover`, JSON.stringify({ since }))).statusCode, 202, `${since}: accepted`)
  }
})

t.test('rotate_secret: grace_seconds null, false, a string, negative or over a week is a 400; absent is the documented 24 h', async t => {
  const endpoint = await makeEndpoint(app, acme, url)
  for (const grace of ['null', 'false', 'true', '"60"', '-1', '604801', '1.5', '1e309']) {
    const res = await send('POST', `/api/webhook_endpoints/${endpoint.id}/rotate_secret`, `{"grace_seconds": ${grace}}`)
    t.equal(res.statusCode, 400, `grace_seconds ${grace}`)
    t.equal(res.json().code, 'invalid_request')
  }
  const before = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })
  t.equal(before.previousSecret, null, 'none of them rotated anything')
  const rotated = await send('POST', `/api/webhook_endpoints/${endpoint.id}/rotate_secret`, '{}')
  t.equal(rotated.statusCode, 200)
  const until = Date.parse(rotated.json().previous_secret_expires_at)
  t.ok(Math.abs(until - (Date.now() + 86_400_000)) < 60_000, 'absent: the previous secret signs for 24 h')
})

t.test('bodies are validated as sent: a number (1e309 included) or a boolean for a string field is a 400, never stored as text', async t => {
  const bodies: Array<[string, string]> = [
    ['description', `{"url": "${url}", "description": 1e309}`],
    ['description', `{"url": "${url}", "description": 5}`],
    ['description', `{"url": "${url}", "description": true}`],
    ['url', '{"url": 1e309}'],
    ['url', '{"url": 12}'],
  ]
  for (const [field, body] of bodies) {
    const res = await send('POST', '/api/webhook_endpoints', body)
    t.equal(res.statusCode, 400, body)
    t.match(res.json(), { code: 'invalid_request', details: [{ path: `body/${field}` }] })
  }
  t.equal(await prisma.webhookEndpoint.count({ where: { organizationId: acme.organizationId, description: { in: ['Infinity', '5', 'true'] } } }), 0, 'nothing stored')
  const endpoint = await makeEndpoint(app, acme, url)
  const patched = await send('PATCH', `/api/webhook_endpoints/${endpoint.id}`, '{"description": 1e309}')
  t.equal(patched.statusCode, 400, 'PATCH as well')
  t.equal((await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).description, null)
})

t.test('query integers are decimal digits: 0x10, 0b11, 0o7, 1e1, " 5" and "+5" are 400s; 16 is a page of 16', async t => {
  for (const path of ['/api/webhook_endpoints', '/api/jobs']) {
    for (const limit of ['0x10', '0b11', '0o7', '1e1', '%205', '%2B5', '5.0', '']) {
      const res = await send('GET', `${path}?limit=${limit}`)
      t.equal(res.statusCode, 400, `${path}?limit=${limit}`)
      t.match(res.json(), { code: 'invalid_request', details: [{ path: 'querystring/limit' }] })
    }
    t.equal((await send('GET', `${path}?limit=16`)).statusCode, 200, `${path}?limit=16`)
  }
})

t.test('two rotations at once: both secrets answered sign the deliveries during their grace (5 rounds)', async t => {
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  for (let round = 1; round <= 5; round++) {
    const tenant = await createTenant(prisma)
    const endpoint = await makeEndpoint(app, tenant, receiver.url)
    const rotate = async () => await app.inject({ method: 'POST', url: `/api/webhook_endpoints/${endpoint.id}/rotate_secret`, headers: tenant.auth, payload: {} })
    const answers = await Promise.all([rotate(), rotate()])
    t.same(answers.map(a => a.statusCode), [200, 200], `round ${round}: both rotations answered`)
    const job = await createJob(prisma, tenant)
    t.ok(await receiver.until(r => r.some(x => x.jobId === job.id)), `round ${round}: the job's event arrives`)
    const delivery = receiver.received.find(x => x.jobId === job.id)!
    for (const [i, answer] of answers.entries()) {
      let verified = true
      try { new Webhook(answer.json().secret).verify(delivery.body, delivery.headers as Record<string, string>) } catch { verified = false }
      t.ok(verified, `round ${round}: the secret of rotation ${i + 1} verifies the delivery`)
    }
  }
})

t.test('an endpoint an operator disabled stays disabled: the partner\'s PATCH to enable it is a 409 naming why', async t => {
  const endpoint = await makeEndpoint(app, acme, url)
  const path = `/api/webhook_endpoints/${endpoint.id}`
  t.ok(await setEndpointStatus(db, endpoint.id, false), 'admin disable-endpoint')
  const refused = await send('PATCH', path, '{"status": "enabled"}')
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { code: 'disabled_by_operator', error: /operator/ })
  t.match((await send('GET', path)).json(), { status: 'disabled', disabled_reason: 'operator' }, 'still disabled')
  t.match((await send('PATCH', path, '{"status": "disabled", "description": "paused"}')).json(), { status: 'disabled', disabled_reason: 'operator', description: 'paused' }, 'a PATCH to disabled leaves the operator\'s reason (which would let the partner enable it after)')
  t.equal((await send('PATCH', path, '{"status": "enabled"}')).statusCode, 409, 'so enabling is still refused')
  for (const op of ['recover', 'test']) {
    const res = await send('POST', `${path}/${op}`, op === 'recover' ? '{"since": "2026-01-01T00:00:00Z"}' : '{}')
    t.equal(res.statusCode, 409, `${op}: 409 too`)
  }
  t.ok(await setEndpointStatus(db, endpoint.id, true), 'admin enable-endpoint')
  t.match((await send('PATCH', path, '{"status": "disabled"}')).json(), { status: 'disabled', disabled_reason: 'requested' })
  t.match((await send('PATCH', path, '{"status": "enabled"}')).json(), { status: 'enabled', disabled_reason: null }, 'once an operator enabled it, the partner may disable and enable it again')
})
