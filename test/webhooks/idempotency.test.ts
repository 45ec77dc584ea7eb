import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, keyWithScopes } from '../helpers/fixtures.js'
import { makeEndpoint } from '../helpers/webhooks.js'

// Idempotency-Key on every POST of the webhooks API (issue 55): a retried POST with the same
// key within 24 hours gets the first answer again and does nothing more; the same key with
// another body is a 422; keys are each API key's own; the answer is kept encrypted.

const { app, prisma } = await buildTestApp(t, { env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' } })
const url = 'http://127.0.0.1:9/hooks'
const post = async (tenant: { auth: { authorization: string } }, path: string, payload: Record<string, unknown>, key?: string) =>
  await app.inject({ method: 'POST', url: path, headers: { ...tenant.auth, ...(key !== undefined ? { 'idempotency-key': key } : {}) }, payload })

t.test('create, retried with the same key: the same answer (the same secret), one endpoint, Idempotent-Replayed', async t => {
  const acme = await createTenant(prisma)
  const first = await post(acme, '/api/webhook_endpoints', { url, description: 'once' }, 'create-1')
  const again = await post(acme, '/api/webhook_endpoints', { description: 'once', url }, 'create-1')
  t.equal(first.statusCode, 201)
  t.equal(again.statusCode, 201)
  t.equal(again.body, first.body, 'byte for byte, the same secret included (the body\'s field order does not matter)')
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(first.headers['idempotent-replayed'], undefined)
  t.equal(again.headers['cache-control'], 'no-store')
  t.equal(await prisma.webhookEndpoint.count({ where: { organizationId: acme.organizationId } }), 1, 'made once')
  const stored = await prisma.idempotencyKey.findFirstOrThrow({ where: { key: 'create-1' } })
  const secret = (first.json() as { secret: string }).secret
  t.notOk(Buffer.from(stored.response!).toString('latin1').includes(secret), 'kept encrypted: the secret is not in the row')
  t.equal((await post(acme, '/api/webhook_endpoints', { url }, 'create-2')).statusCode, 201, 'another key: another endpoint')
  t.equal((await post(acme, '/api/webhook_endpoints', { url })).statusCode, 201, 'no key: as before')
  t.equal(await prisma.webhookEndpoint.count({ where: { organizationId: acme.organizationId } }), 3)
})

t.test('the same key with another body or operation: 422 idempotency_key_reused, nothing done', async t => {
  const acme = await createTenant(prisma)
  t.equal((await post(acme, '/api/webhook_endpoints', { url }, 'k')).statusCode, 201)
  const reused = await post(acme, '/api/webhook_endpoints', { url, description: 'other' }, 'k')
  t.equal(reused.statusCode, 422)
  t.match(reused.json(), { code: 'idempotency_key_reused', error: /another request/ })
  const endpoint = (await prisma.webhookEndpoint.findFirstOrThrow({ where: { organizationId: acme.organizationId } })).id
  t.equal((await post(acme, `/api/webhook_endpoints/${endpoint}/rotate_secret`, {}, 'k')).statusCode, 422, 'another operation')
  t.equal((await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint } })).previousSecret, null, 'not rotated')
  t.equal(await prisma.webhookEndpoint.count({ where: { organizationId: acme.organizationId } }), 1)
})

t.test('5 creations at once with one key: one endpoint; the others replay it or are told it is in progress (409, Retry-After)', async t => {
  const acme = await createTenant(prisma)
  const answers = await Promise.all(Array.from({ length: 5 }, async () => await post(acme, '/api/webhook_endpoints', { url }, 'at-once')))
  t.equal(await prisma.webhookEndpoint.count({ where: { organizationId: acme.organizationId } }), 1, 'one endpoint')
  const made = answers.filter(a => a.statusCode === 201)
  t.ok(made.length >= 1 && made.every(a => a.body === made[0]!.body), `every 201 the same answer (${answers.map(a => a.statusCode).join(', ')})`)
  for (const busy of answers.filter(a => a.statusCode === 409)) t.match(busy, { headers: { 'retry-after': '1' }, body: /idempotency_key_in_use/ })
  t.ok(answers.every(a => a.statusCode === 201 || a.statusCode === 409))
})

t.test('rotate_secret and recover, retried: the first answer, nothing more done', async t => {
  const acme = await createTenant(prisma)
  const { id } = await makeEndpoint(app, acme, url)
  const rotated = await post(acme, `/api/webhook_endpoints/${id}/rotate_secret`, { grace_seconds: 60 }, 'rot')
  const row = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })
  const again = await post(acme, `/api/webhook_endpoints/${id}/rotate_secret`, { grace_seconds: 60 }, 'rot')
  t.equal(again.body, rotated.body, 'the same new secret')
  t.same((await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })).secret, row.secret, 'rotated once')
  const recovered = await post(acme, `/api/webhook_endpoints/${id}/recover`, { since: '2026-01-01T00:00:00Z' }, 'rec')
  t.equal(recovered.statusCode, 202)
  t.equal((await post(acme, `/api/webhook_endpoints/${id}/recover`, { since: '2026-01-01T00:00:00Z' }, 'rec')).headers['idempotent-replayed'], 'true')
  const refused = await post(acme, `/api/webhook_endpoints/${id}/recover`, { since: 'yesterday' }, 'bad')
  t.equal(refused.statusCode, 400, 'a validation error is not kept')
  t.equal((await post(acme, `/api/webhook_endpoints/${id}/recover`, { since: '2026-01-01T00:00:00Z' }, 'bad')).statusCode, 202, 'so the key may then be used for the valid request')
})

t.test('an answered 4xx is kept too: the 409 of the limit, replayed after an endpoint was deleted', async t => {
  const acme = await createTenant(prisma)
  const ids: string[] = []
  for (let i = 0; i < 16; i++) ids.push((await makeEndpoint(app, acme, url)).id)
  const refused = await post(acme, '/api/webhook_endpoints', { url }, 'full')
  t.equal(refused.statusCode, 409)
  await app.inject({ method: 'DELETE', url: `/api/webhook_endpoints/${ids[0]}`, headers: acme.auth })
  const replayed = await post(acme, '/api/webhook_endpoints', { url }, 'full')
  t.equal(replayed.statusCode, 409, 'the retry gets the first answer, as Stripe does')
  t.equal(replayed.body, refused.body)
})

t.test('keys are each API key\'s own, and last 24 hours; a key must be printable ASCII of 255 characters at most', async t => {
  const acme = await createTenant(prisma)
  const other = await keyWithScopes(prisma, acme, ['*'])
  const first = await post(acme, '/api/webhook_endpoints', { url }, 'shared')
  const theirs = await post(other, '/api/webhook_endpoints', { url }, 'shared')
  t.not(theirs.json().id, first.json().id, 'another API key\'s same key: its own request')
  await prisma.$executeRaw`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'shared'`
  const later = await post(acme, '/api/webhook_endpoints', { url }, 'shared')
  t.equal(later.statusCode, 201)
  t.not(later.json().id, first.json().id, 'after 24 hours: a new request')
  for (const key of ['x'.repeat(256), 'with space', 'é']) {
    const res = await app.inject({ method: 'POST', url: '/api/webhook_endpoints', headers: { ...acme.auth, 'idempotency-key': key }, payload: { url } })
    t.equal(res.statusCode, 400, `${JSON.stringify(key.slice(0, 12))}: 400`)
  }
})
