import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, keyWithScopes } from '../helpers/fixtures.js'
import { makeEndpoint } from '../helpers/webhooks.js'
import { tampered } from '../helpers/tampered.js'
import { NOT_PUBLIC } from '../../src/webhooks/egress.js'

// /api/webhook_endpoints managed by the partner (issue 41): the secret shown once, scopes,
// another organization's endpoint a 404, URLs refused at creation (the address guard; no
// connection is opened to check them, and names resolve through the test resolver only:
// `localhost`), pagination and its cursors.

// Names as this file's resolver answers them (never a query off the machine).
const NAMES: Record<string, string[]> = { localhost: ['127.0.0.1'], 'intranet.example': ['10.20.30.40'], 'dual.example': ['93.184.216.34', '10.0.0.1'], 'partner.example': ['93.184.216.34'] }
const asked = new Set<string>()
const webhookLookup = ((hostname: string, _options: unknown, callback: (error: NodeJS.ErrnoException | null, addresses?: Array<{ address: string, family: number }>) => void) => {
  asked.add(hostname)
  const addresses = NAMES[hostname]
  process.nextTick(() => { addresses === undefined ? callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })) : callback(null, addresses.map(address => ({ address, family: 4 }))) })
}) as unknown as NonNullable<Parameters<typeof buildTestApp>[1]>['webhookLookup']
const { app, prisma } = await buildTestApp(t, { env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' }, webhookLookup })
const acme = await createTenant(prisma)
const globex = await createTenant(prisma)
const base = 'http://127.0.0.1:9/hooks'
const post = async (tenant: typeof acme, payload: unknown) => await app.inject({ method: 'POST', url: '/api/webhook_endpoints', headers: tenant.auth, payload: payload as Record<string, unknown> })

t.test('create: 201 with the secret, shown once; get and list never show it', async t => {
  const res = await post(acme, { url: base, description: 'mirror' })
  t.equal(res.statusCode, 201)
  t.equal(res.headers['cache-control'], 'no-store', 'the answer with the secret is not to be kept')
  const body = res.json()
  t.match(body, { url: base, events: ['job.updated', 'job.deleted'], status: 'enabled', description: 'mirror' })
  t.match(body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'Standard Webhooks\' form: whsec_ and 32 bytes of base64')
  t.equal(Buffer.from(body.secret.slice(6), 'base64').length, 32)
  const got = await app.inject({ url: `/api/webhook_endpoints/${body.id}`, headers: acme.auth })
  t.equal(got.statusCode, 200)
  t.notOk('secret' in got.json(), 'GET has no secret')
  t.notOk((await app.inject({ url: '/api/webhook_endpoints', headers: acme.auth })).body.includes(body.secret), 'nor the list')
  const stored = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: body.id } })
  t.notOk(Buffer.from(stored.secret).toString('latin1').includes(body.secret.slice(6)) || Buffer.from(stored.secret).includes(Buffer.from(body.secret.slice(6), 'base64')), 'stored encrypted: neither the secret nor its key bytes are in the row')
})

t.test('scopes: a jobs:read key gets 403 insufficient_scope; webhooks:read reads and does not write; making one needs jobs:read too', async t => {
  const readOnly = await keyWithScopes(prisma, acme, ['jobs:read'])
  const denied = await post(readOnly, { url: base })
  t.equal(denied.statusCode, 403)
  t.match(denied.json(), { code: 'insufficient_scope', required_scope: 'webhooks:write' })
  t.equal((await app.inject({ url: '/api/webhook_endpoints', headers: readOnly.auth })).json().required_scope, 'webhooks:read')
  const reader = await keyWithScopes(prisma, acme, ['webhooks:read'])
  t.equal((await app.inject({ url: '/api/webhook_endpoints', headers: reader.auth })).statusCode, 200)
  t.match((await post(reader, { url: base })).json(), { code: 'insufficient_scope', required_scope: 'webhooks:write' })
  const writerWithoutJobs = await keyWithScopes(prisma, acme, ['webhooks:write'])
  t.match((await post(writerWithoutJobs, { url: base })).json(), { code: 'insufficient_scope', required_scope: 'jobs:read' }, 'an endpoint is told what its key reads: a key that reads no job makes none')
  t.equal((await post(await keyWithScopes(prisma, acme, ['webhooks:write', 'jobs:read']), { url: base })).statusCode, 201)
})

t.test('another organization\'s endpoint is a 404, like a missing one, for every operation', async t => {
  const theirs = await makeEndpoint(app, globex, base)
  const ops: Array<{ method: 'GET' | 'PATCH' | 'DELETE' | 'POST', url: string, payload?: Record<string, unknown> }> = [
    { method: 'GET', url: `/api/webhook_endpoints/${theirs.id}` },
    { method: 'PATCH', url: `/api/webhook_endpoints/${theirs.id}`, payload: { description: 'mine now' } },
    { method: 'DELETE', url: `/api/webhook_endpoints/${theirs.id}` },
    { method: 'POST', url: `/api/webhook_endpoints/${theirs.id}/rotate_secret`, payload: {} },
    { method: 'GET', url: `/api/webhook_endpoints/${theirs.id}/deliveries` },
    { method: 'POST', url: `/api/webhook_endpoints/${theirs.id}/recover`, payload: { since: '2026-01-01T00:00:00Z' } },
  ]
  for (const op of ops) {
    const res = await app.inject({ ...op, headers: acme.auth })
    t.equal(res.statusCode, 404, `${op.method} ${op.url.replace(theirs.id, '{id}')}`)
    t.equal(res.json().code, 'not_found')
  }
  t.notOk((await app.inject({ url: '/api/webhook_endpoints?limit=100', headers: acme.auth })).body.includes(theirs.id), 'not in the list')
  t.equal((await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: theirs.id } })).description, null, 'unchanged')
})

t.test('URLs that are not https at a public address are refused at creation, 400 on body/url, without a connection', async t => {
  // Every refused address gets one message (issue 55): what a name resolves to, and whether it
  // exists, would map the service's internal DNS for any webhooks:write key.
  const notPublic = [
    'http://93.184.216.34/hooks', 'https://127.0.0.2/hooks', 'https://10.1.2.3/hooks', 'https://172.16.0.1/hooks', 'https://192.168.1.1/hooks',
    'https://169.254.169.254/latest/meta-data', 'https://[fd00:ec2::254]/', 'https://100.64.0.1/', 'https://224.0.0.1/', 'https://0.0.0.0/',
    'https://240.0.0.1/', 'https://[::1]/', 'https://[::ffff:10.0.0.1]/', 'https://[fe80::1]/', 'https://[::7f00:1]/', 'https://[::a00:1]/',
    'https://intranet.example/hooks', 'https://dual.example/hooks', 'http://partner.example/hooks', 'https://unknown.invalid/hooks',
  ]
  const messages = new Set<string>()
  for (const url of notPublic) {
    const res = await post(acme, { url })
    t.equal(res.statusCode, 400, url)
    t.match(res.json(), { code: 'invalid_request', details: [{ path: 'body/url' }] }, url)
    const message = (res.json() as { details: Array<{ message: string }> }).details[0]!.message
    messages.add(message)
    t.notMatch(res.body, /10\.20\.30\.40|10\.0\.0\.1|93\.184|resolve|ENOTFOUND|private|loopback|linkLocal/, `${url}: nothing of what it resolves to, or why`)
  }
  t.same([...messages], [`is refused: ${NOT_PUBLIC}`], 'one message for every refused address, literal or named, missing or private')
  t.same([...asked].sort(), ['dual.example', 'intranet.example', 'partner.example', 'unknown.invalid'], 'every name resolved by this file\'s resolver, none by the system\'s')
  const refused = [
    ['ftp://example.com/', /must be https/],
    ['https://user:pass@127.0.0.1/', /credentials/],
    ['not a url', /not an absolute URL/],
    ['https://partner.example/hooks#part', /fragment/],
  ] as const
  for (const [url, why] of refused) {
    const res = await post(acme, { url })
    t.equal(res.statusCode, 400, url)
    t.match(res.json(), { code: 'invalid_request', details: [{ path: 'body/url', message: why }] }, `${url}: ${(res.json() as { details?: Array<{ message: string }> }).details?.[0]?.message}`)
  }
  t.equal((await post(acme, { url: 'http://127.0.0.1:1/hooks' })).statusCode, 201, 'an address of WEBHOOK_ALLOWED_NETWORKS: allowed, over http too')
  t.equal((await post(acme, { url: 'https://93.184.216.34/hooks' })).statusCode, 201, 'a public address over https: allowed (no connection is made to check it)')
  t.equal((await post(acme, { url: 'https://partner.example/hooks' })).statusCode, 201, 'a name of public addresses only: allowed')
  t.equal((await post(acme, { url: 'https://localhost/hooks' })).statusCode, 201, 'a name of the allowed network: allowed')
  const changed = await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${(await makeEndpoint(app, acme, base)).id}`, headers: acme.auth, payload: { url: 'https://10.0.0.1/' } })
  t.match(changed.json(), { code: 'invalid_request', details: [{ path: 'body/url' }] }, 'a change of URL is checked the same way')
})

t.test('bad bodies: 400 in the error shape, never a 5xx', async t => {
  const bodies: unknown[] = [{}, { url: 42 }, { url: base, events: [] }, { url: base, events: ['job.created'] }, { url: base, events: ['job.updated', 'job.updated'] }, { url: base, extra: true }, { url: 'x'.repeat(3000) }, { url: base, description: 'd'.repeat(501) }]
  for (const body of bodies) {
    const res = await post(acme, body)
    t.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 80))
    t.equal(res.json().code, 'invalid_request')
  }
  const id = (await makeEndpoint(app, acme, base)).id
  for (const payload of [{}, { status: 'paused' }, { events: [] }]) {
    t.equal((await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${id}`, headers: acme.auth, payload })).statusCode, 400, `PATCH ${JSON.stringify(payload)}`)
  }
  t.equal((await app.inject({ method: 'POST', url: `/api/webhook_endpoints/${id}/rotate_secret`, headers: acme.auth, payload: { grace_seconds: -1 } })).statusCode, 400)
  t.equal((await app.inject({ method: 'POST', url: `/api/webhook_endpoints/${id}/recover`, headers: acme.auth, payload: { since: 'yesterday' } })).statusCode, 400)
})

t.test('list: newest first, paginated with signed cursors bound to the organization', async t => {
  const tenant = await createTenant(prisma)
  const ids: string[] = []
  for (let i = 0; i < 5; i++) ids.push((await makeEndpoint(app, tenant, base, { description: `n${i}` })).id)
  const seen: string[] = []
  let cursor: string | null = null
  do {
    const res: Awaited<ReturnType<typeof app.inject>> = await app.inject({ url: `/api/webhook_endpoints?limit=2${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, headers: tenant.auth })
    t.equal(res.statusCode, 200)
    seen.push(...res.json().data.map((e: { id: string }) => e.id))
    cursor = res.json().next_cursor
  } while (cursor !== null)
  t.same(seen, [...ids].reverse(), 'every endpoint once, newest first')
  const first = (await app.inject({ url: '/api/webhook_endpoints?limit=2', headers: tenant.auth })).json().next_cursor as string
  t.equal((await app.inject({ url: `/api/webhook_endpoints?cursor=${encodeURIComponent(first)}`, headers: acme.auth })).statusCode, 400, 'another organization\'s cursor: 400')
  t.equal((await app.inject({ url: `/api/webhook_endpoints?cursor=${encodeURIComponent(tampered(first))}`, headers: tenant.auth })).statusCode, 400, 'an altered one: 400')
})

t.test('patch, disable, enable, delete', async t => {
  const id = (await makeEndpoint(app, acme, base)).id
  const patch = async (payload: Record<string, unknown>) => await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${id}`, headers: acme.auth, payload })
  t.match((await patch({ events: ['job.deleted'], description: null })).json(), { events: ['job.deleted'], description: null })
  t.match((await patch({ status: 'disabled' })).json(), { status: 'disabled', disabled_reason: 'requested' })
  t.match((await patch({ status: 'enabled' })).json(), { status: 'enabled', disabled_reason: null })
  const deleted = await app.inject({ method: 'DELETE', url: `/api/webhook_endpoints/${id}`, headers: acme.auth })
  t.equal(deleted.statusCode, 204)
  t.equal(deleted.body, '')
  t.equal((await app.inject({ url: `/api/webhook_endpoints/${id}`, headers: acme.auth })).statusCode, 404)
})

t.test('a new url is told what the key that set it may read, not what its maker\'s key could', async t => {
  const id = (await makeEndpoint(app, acme, base)).id
  const narrow = await keyWithScopes(prisma, acme, ['webhooks:write', 'jobs:read'])
  const before = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })
  t.not(before.apiKeyId, narrow.apiKeyId, 'made by the all-scope key')
  t.equal((await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${id}`, headers: narrow.auth, payload: { description: 'renamed' } })).statusCode, 200)
  t.equal((await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })).apiKeyId, before.apiKeyId, 'a description changed: still its maker\'s key')
  t.equal((await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${id}`, headers: narrow.auth, payload: { url: 'http://127.0.0.1:10/other' } })).statusCode, 200)
  t.equal((await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })).apiKeyId, narrow.apiKeyId, 'the url changed: the key that changed it')
})

t.test('on a server without WEBHOOK_SECRET_KEY: 503 in the error shape, with Retry-After', { skip: process.env.TEST_DATABASE_URL === undefined ? 'the embedded database makes a key of its own' : false }, async t => {
  const bare = await buildTestApp(t, { env: { WEBHOOK_SECRET_KEY: '', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' }, webhookLookup })
  const tenant = await createTenant(bare.prisma)
  const res = await bare.app.inject({ method: 'POST', url: '/api/webhook_endpoints', headers: tenant.auth, payload: { url: base } })
  t.equal(res.statusCode, 503)
  t.match(res.json(), { code: 'unavailable', error: /WEBHOOK_SECRET_KEY/, request_id: String })
  t.equal(res.headers['retry-after'], '60')
  t.equal(await bare.prisma.webhookEndpoint.count(), 0, 'nothing stored')
})
