import t from 'tap'
import { createApiKey, revokeApiKey } from '../../src/admin/commands.js'
import { buildTestApp } from '../helpers/app.js'
import { createTenant } from '../helpers/fixtures.js'
import { sleep } from '../helpers/sleep.js'
import { within } from '../helpers/until.js'

const { app, prisma } = await buildTestApp(t)
const pro = await createTenant(prisma)
const other = await createTenant(prisma, { plan: 'free' })
const revoked = await createApiKey(prisma, { userId: pro.userId })
await revokeApiKey(prisma, { prefix: revoked.prefix })
const expired = await createApiKey(prisma, { userId: pro.userId, expiresAt: new Date(Date.now() - 1000) })
const future = await createApiKey(prisma, { userId: pro.userId, expiresAt: new Date(Date.now() + 3_600_000) })

const me = (authorization?: string) =>
  app.inject({ method: 'GET', url: '/api/me', headers: authorization === undefined ? {} : { authorization } })

t.test('every failure is the same 401 with WWW-Authenticate: Bearer', async t => {
  const unknownKey = pro.key.slice(0, -4) + (pro.key.endsWith('AAAA') ? 'BBBB' : 'AAAA')
  const cases: Record<string, string | undefined> = {
    'missing header': undefined,
    'empty header': '',
    'other scheme': `Basic ${Buffer.from('a:b').toString('base64')}`,
    'scheme only': 'Bearer',
    'malformed key': 'Bearer not-a-key',
    'two tokens': `Bearer ${pro.key} ${pro.key}`,
    'unknown key': `Bearer ${unknownKey}`,
    'revoked key': `Bearer ${revoked.key}`,
    'expired key': `Bearer ${expired.key}`,
  }
  for (const [name, header] of Object.entries(cases)) {
    const res = await me(header)
    t.equal(res.statusCode, 401, `${name}: 401`)
    t.equal(res.headers['www-authenticate'], 'Bearer', `${name}: WWW-Authenticate`)
    t.match(res.headers['content-type'], /^application\/json/, `${name}: JSON`)
    const { request_id: id, ...body } = res.json()
    t.equal(id, res.headers['x-request-id'], `${name}: request_id matches the header`)
    t.same(body, { error: 'A valid API key is required: send `Authorization: Bearer <api key>`.', code: 'unauthorized' }, `${name}: body`)
  }
})

t.test('a valid key authenticates; the scheme word is case-insensitive', async t => {
  for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
    const res = await me(`${scheme} ${pro.key}`)
    t.equal(res.statusCode, 200, scheme)
    t.equal(res.json().organization.id, pro.organizationId)
  }
  const res = await me(`Bearer ${future.key}`)
  t.equal(res.statusCode, 200, 'a key with a future expiry works')
  t.equal((await me(other.auth.authorization)).json().organization.id, other.organizationId, 'each key is its own organization')
})

t.test('last_used_at is recorded, and not rewritten on every request', async t => {
  const fresh = await createApiKey(prisma, { userId: pro.userId })
  const lastUsed = async () => (await prisma.apiKey.findUniqueOrThrow({ where: { id: fresh.id } })).lastUsedAt
  t.equal(await lastUsed(), null)
  t.equal((await me(`Bearer ${fresh.key}`)).statusCode, 200)
  // The write is not awaited by the request; give it a moment.
  let first = null as Date | null // set by the wait below
  await within(async () => (first = await lastUsed()) !== null, 1000, 20)
  t.ok(first instanceof Date, 'recorded after the first use')
  for (let i = 0; i < 5; i++) await me(`Bearer ${fresh.key}`)
  await sleep(100)
  t.same(await lastUsed(), first, 'unchanged by later uses within the resolution window')
})
