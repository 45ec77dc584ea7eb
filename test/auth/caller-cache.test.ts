import t, { type Test } from 'tap'
import { createApiKey, revokeApiKey, setApiKeyScopes, setPlan } from '../../src/admin/commands.js'
import { buildApp } from '../../src/app.js'
import { CallerCache, type LoadedCaller } from '../../src/auth/caller-cache.js'
import { apiDatabase, buildTestApp } from '../helpers/app.js'
import { assertContract } from '../helpers/contract.js'
import { createJob, createTenant, type Tenant } from '../helpers/fixtures.js'
import { sleep } from '../helpers/sleep.js'
import { within } from '../helpers/until.js'

// The caller cache end to end, on the database the suite runs on (embedded, or the server
// with TEST_DATABASE_URL). The backstop is set to an hour, so a change that takes effect
// within this file's bound (BOUND_MS) took effect through the database's notification, not
// through the time bound. Figures: how long after the change's commit the first request saw it.

const BOUND_MS = 1000
const HOUR = '3600000'
const env = { AUTH_CACHE_TTL_MS: HOUR, RATE_LIMIT_MAX: '1000000' }
const { app, prisma, db, config } = await buildTestApp(t, { env })
const figures: string[] = []
t.teardown(() => { console.log(`# caller cache figures: ${figures.join(', ')}`) })

type App = typeof app

/** Milliseconds until `url` answers `status`, asking again and again; fails past BOUND_MS. */
async function until (t: Test, target: App, url: string, tenant: Tenant, status: number): Promise<number> {
  const started = performance.now()
  let last = 0
  if (!await within(async () => (last = (await target.inject({ url, headers: tenant.auth })).statusCode) === status, BOUND_MS, 1)) t.fail(`still ${last} after ${BOUND_MS} ms, expected ${status}`)
  return performance.now() - started
}

async function warm (t: Test, target: App, tenant: Tenant, url = '/api/me'): Promise<void> {
  t.equal((await target.inject({ url, headers: tenant.auth })).statusCode, 200, 'the caller is known')
  t.equal((await target.inject({ url, headers: tenant.auth })).statusCode, 200, 'and cached')
}

t.test('the cache is on and hears changes', async t => {
  t.ok(app.callerCache.enabled)
})

t.test('a revoked key is refused once the revocation commits', async t => {
  const tenant = await createTenant(prisma)
  await warm(t, app, tenant)
  const hits = app.callerCache.stats.hits
  t.ok(hits > 0, 'the second request was served from the cache')
  t.ok(await revokeApiKey(prisma, { id: tenant.apiKeyId }))
  const ms = await until(t, app, '/api/me', tenant, 401)
  figures.push(`revocation seen after ${ms.toFixed(1)} ms`)
})

t.test('an expired key is refused from its expiry on, with nothing written', async t => {
  const tenant = await createTenant(prisma)
  const expiring = await createApiKey(prisma, { userId: tenant.userId, expiresAt: new Date(Date.now() + 1500) })
  const auth = { ...tenant, auth: { authorization: `Bearer ${expiring.key}` } }
  await warm(t, app, auth)
  await sleep(Math.max(0, expiring.expiresAt!.getTime() - Date.now()))
  t.equal((await app.inject({ url: '/api/me', headers: auth.auth })).statusCode, 401, 'the first request after the expiry')
})

t.test('a plan that loses Pro loses analytics once the change commits', async t => {
  const tenant = await createTenant(prisma, { plan: 'pro' })
  const job = await createJob(prisma, tenant)
  const url = `/api/jobs/${job.id}/analytics`
  await warm(t, app, tenant, url)
  await setPlan(prisma, { organizationId: tenant.organizationId, plan: 'free' })
  figures.push(`downgrade seen after ${(await until(t, app, url, tenant, 403)).toFixed(1)} ms`)
  await setPlan(prisma, { organizationId: tenant.organizationId, plan: 'pro', status: 'canceled' })
  t.equal((await app.inject({ url, headers: tenant.auth })).statusCode, 403, 'canceled is not Pro either')
  await setPlan(prisma, { organizationId: tenant.organizationId, plan: 'pro', status: 'active' })
  figures.push(`upgrade seen after ${(await until(t, app, url, tenant, 200)).toFixed(1)} ms`)
})

t.test('a paid period that ends ends Pro access at that instant, with nothing written', async t => {
  const tenant = await createTenant(prisma, { plan: 'pro', currentPeriodEnd: new Date(Date.now() + 1500) })
  const job = await createJob(prisma, tenant)
  const url = `/api/jobs/${job.id}/analytics`
  await warm(t, app, tenant, url)
  await sleep(1600)
  t.equal((await app.inject({ url, headers: tenant.auth })).statusCode, 403)
})

t.test('every instance drops what it cached, not only the one that saw the change', async t => {
  const second = await buildApp({ config, database: apiDatabase(db, config) })
  t.teardown(async () => { await second.close() })
  await second.ready()
  t.ok(second.callerCache.enabled)
  const tenant = await createTenant(prisma)
  await warm(t, app, tenant)
  await warm(t, second, tenant)
  await revokeApiKey(prisma, { id: tenant.apiKeyId })
  figures.push(`revocation seen by a second instance after ${(await until(t, second, '/api/me', tenant, 401)).toFixed(1)} ms`)
  t.equal((await app.inject({ url: '/api/me', headers: tenant.auth })).statusCode, 401, 'and by the first')
})

t.test('a change of scopes takes effect on every instance as fast as a revocation (issue 24)', async t => {
  const second = await buildApp({ config, database: apiDatabase(db, config) })
  t.teardown(async () => { await second.close() })
  await second.ready()
  const tenant = await createTenant(prisma, { plan: 'pro' })
  const job = await createJob(prisma, tenant)
  const url = `/api/jobs/${job.id}/analytics`
  await warm(t, app, tenant, url)
  const hits = second.callerCache.stats.hits
  await warm(t, second, tenant, url)
  t.ok(second.callerCache.stats.hits > hits, 'the second instance serves the key from its cache')
  t.ok(await setApiKeyScopes(prisma, { id: tenant.apiKeyId }, ['jobs:read']), 'restricted to jobs:read')
  figures.push(`scope removed, seen by a second instance after ${(await until(t, second, url, tenant, 403)).toFixed(1)} ms`)
  const refused = await second.inject({ url, headers: tenant.auth })
  t.match(refused.json(), { code: 'insufficient_scope', required_scope: 'analytics:read' })
  // The second instance is not the test app, whose responses are checked for it.
  t.doesNotThrow(() => { assertContract({ method: 'GET', url, statusCode: refused.statusCode, headers: refused.headers, body: refused.body }) }, 'the 403 is the one the document declares')
  t.equal((await app.inject({ url, headers: tenant.auth })).statusCode, 403, 'and by the first')
  t.equal((await second.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })).statusCode, 200, 'jobs:read still works')
  t.same((await app.inject({ url: '/api/me', headers: tenant.auth })).json().scopes, ['jobs:read'], '/api/me lists the new scopes')
  await warm(t, second, tenant, '/api/me')
  t.ok(await setApiKeyScopes(prisma, { id: tenant.apiKeyId }, ['*']), 'every scope again')
  figures.push(`scope granted, seen by a second instance after ${(await until(t, second, url, tenant, 200)).toFixed(1)} ms`)
  t.equal((await app.inject({ url, headers: tenant.auth })).statusCode, 200, 'and by the first')
})

t.test('a change rolled back changes nothing; last_used_at writes do not clear the cache', async t => {
  const tenant = await createTenant(prisma)
  await warm(t, app, tenant)
  const before = app.callerCache.stats.invalidations
  await prisma.$transaction(async tx => {
    await tx.apiKey.update({ where: { id: tenant.apiKeyId }, data: { revokedAt: new Date() } })
    throw new Error('roll back')
  }).catch(() => {})
  await prisma.apiKey.update({ where: { id: tenant.apiKeyId }, data: { lastUsedAt: new Date() } })
  await sleep(100)
  t.equal(app.callerCache.stats.invalidations, before, 'no notification arrived')
  t.equal((await app.inject({ url: '/api/me', headers: tenant.auth })).statusCode, 200)
})

t.test('while the listener is cut off nothing is served from the cache; it comes back by itself', { skip: db.url === undefined ? 'needs a server: the embedded database has no connections to cut' : false }, async t => {
  const tenant = await createTenant(prisma)
  await warm(t, app, tenant)
  const cut = await prisma.$queryRaw<Array<{ n: number }>>`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'screening-read-api:listen' AND datname = current_database()`
  t.ok(cut[0]!.n >= 1, 'the listener connection was terminated')
  const started = performance.now()
  await within(() => !app.callerCache.enabled, BOUND_MS, 1)
  t.notOk(app.callerCache.enabled, 'the cache is off while nothing is heard')
  await revokeApiKey(prisma, { id: tenant.apiKeyId })
  t.equal((await app.inject({ url: '/api/me', headers: tenant.auth })).statusCode, 401, 'a change made meanwhile is seen at once')
  await within(() => app.callerCache.enabled, 5000 - (performance.now() - started), 10)
  t.ok(app.callerCache.enabled, 'listening again')
  figures.push(`listener back after ${(performance.now() - started).toFixed(0)} ms`)
})

// The listener's proof of hearing has a deadline (issue 35); the cache enforces it itself, by
// the clock at each use, so that no timer running late can stretch it.
t.test('past the deadline of the last proof of hearing, nothing is served or kept; a new proof starts afresh', async t => {
  const cache = new CallerCache(3_600_000)
  const caller = { apiKeyId: 'k' } as unknown as LoadedCaller
  t.equal(cache.offReason, 'starting', 'off until a first proof')
  cache.set('a', caller, cache.version(), Date.now())
  t.equal(cache.get('a', Date.now()), undefined, 'nothing kept before it')
  cache.heard(performance.now() + 100)
  t.ok(cache.enabled)
  cache.set('a', caller, cache.version(), Date.now())
  t.equal(cache.get('a', Date.now()), caller, 'served while the proof holds')
  await sleep(150)
  t.notOk(cache.enabled, 'off at the deadline, with no call from the listener')
  t.equal(cache.offReason, 'no_probe')
  t.equal(cache.get('a', Date.now()), undefined, 'not served')
  cache.set('b', caller, cache.version(), Date.now())
  cache.heard(performance.now() + 60_000)
  t.equal(cache.get('a', Date.now()), undefined, 'what was cached before the gap is gone: a change may have been missed in it')
  t.equal(cache.get('b', Date.now()), undefined, 'and nothing was kept during it')
  cache.deaf('no_echo')
  t.notOk(cache.enabled)
  t.equal(cache.offReason, 'no_echo')
})
