import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { apiDatabase, buildTestApp } from '../helpers/app.js'
import { createTestDatabase } from '../helpers/database.js'
import { createTenant } from '../helpers/fixtures.js'
import { redisUrl, skipWithoutRedis } from '../helpers/redis.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { sleep } from '../helpers/sleep.js'
import { within } from '../helpers/until.js'

t.test('per API key: headers on every response, then 429 with Retry-After in the error shape', async t => {
  const { app, prisma } = await buildTestApp(t, { env: { RATE_LIMIT_MAX: '3' } })
  const a = await createTenant(prisma)
  const b = await createTenant(prisma)
  const me = (headers: Record<string, string>) => app.inject({ url: '/api/me', headers })
  for (const remaining of [2, 1, 0]) {
    const res = await me(a.auth)
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-ratelimit-limit'], '3')
    t.equal(res.headers['x-ratelimit-remaining'], String(remaining))
    t.match(res.headers['x-ratelimit-reset'], /^\d+$/)
  }
  const limited = await me(a.auth)
  t.equal(limited.statusCode, 429)
  t.match(limited.headers['retry-after'], /^\d+$/)
  t.equal(limited.headers['x-ratelimit-remaining'], '0')
  t.same(limited.json(), { error: limited.json().error, code: 'rate_limited', request_id: limited.headers['x-request-id'] })
  t.match(limited.json().error, /at most 3 requests per API key a minute/)
  t.equal((await app.inject({ url: `/api/jobs/${randomUUID()}`, headers: a.auth })).statusCode, 429, 'every operation shares the key\'s budget')
  t.equal((await me(b.auth)).statusCode, 200, 'another key has its own budget')
})

t.test('RATE_LIMIT_WINDOW_S sets the window: Retry-After within it, and the budget back after it', async t => {
  const { app, prisma } = await buildTestApp(t, { env: { RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_S: '2' } })
  const { auth } = await createTenant(prisma)
  t.equal((await app.inject({ url: '/api/me', headers: auth })).statusCode, 200)
  const limited = await app.inject({ url: '/api/me', headers: auth })
  t.equal(limited.statusCode, 429)
  const retryAfter = Number(limited.headers['retry-after'])
  t.ok(retryAfter >= 1 && retryAfter <= 2, `Retry-After ${retryAfter} s is within the 2 s window`)
  t.match(limited.json().error, /at most 1 requests per API key per 2 s/)
  await sleep(retryAfter * 1000 + 100)
  t.equal((await app.inject({ url: '/api/me', headers: auth })).statusCode, 200, 'allowed again once Retry-After has passed')
})

t.test('failed authentications are limited per client IP', async t => {
  const { app } = await buildTestApp(t, { env: { AUTH_FAILURE_LIMIT: '2' } })
  const bad = () => app.inject({ url: '/api/me', headers: { authorization: 'Bearer srk_AAAAAAAA_' + 'A'.repeat(43) } })
  const first = await bad()
  t.equal(first.statusCode, 401)
  t.equal(first.headers['x-ratelimit-limit'], '2')
  t.equal((await bad()).statusCode, 401)
  const third = await bad()
  t.equal(third.statusCode, 429)
  t.equal(third.json().code, 'rate_limited')
  t.match(third.headers['retry-after'], /^\d+$/)
})

t.test('with Redis, two instances share one limit', { skip: skipWithoutRedis }, async t => {
  const db = await createTestDatabase()
  t.teardown(() => db.close())
  const tenant = await createTenant(db.prisma)
  const config = loadConfig({ LOG_LEVEL: 'silent', REDIS_URL: redisUrl, RATE_LIMIT_MAX: '4' })
  // Two apps, one database (as two instances behind a load balancer).
  const one = await buildApp({ config, database: apiDatabase(db, config) })
  const two = await buildApp({ config, database: apiDatabase(db, config) })
  t.teardown(async () => { await one.close(); await two.close() })
  const statuses = []
  for (let i = 0; i < 6; i++) statuses.push((await (i % 2 === 0 ? one : two).inject({ url: '/api/me', headers: tenant.auth })).statusCode)
  t.same(statuses, [200, 200, 200, 200, 429, 429], 'the fifth request is refused, whichever instance gets it')
})

t.test('with Redis unreachable, the API keeps serving (fail open) without waiting long', async t => {
  const { app, prisma } = await buildTestApp(t, { env: { REDIS_URL: 'redis://127.0.0.1:9', RATE_LIMIT_MAX: '1' } })
  const tenant = await createTenant(prisma)
  const started = Date.now()
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: '/api/me', headers: tenant.auth })).statusCode, 200)
  t.ok(Date.now() - started < 3000, `three requests in ${Date.now() - started} ms`)
})

t.test('Redis lost, frozen and back: the API serves throughout, then limits again', { skip: skipWithoutRedis }, async t => {
  const proxy = await TcpProxy.before(redisUrl)
  t.teardown(() => proxy.close())
  const { app, prisma } = await buildTestApp(t, { env: { REDIS_URL: proxy.url, RATE_LIMIT_MAX: '3' } })
  const me = async (tenant: { auth: Record<string, string> }): Promise<{ status: number, ms: number }> => {
    const started = Date.now()
    const res = await app.inject({ url: '/api/me', headers: tenant.auth })
    return { status: res.statusCode, ms: Date.now() - started }
  }
  const statuses = async (tenant: { auth: Record<string, string> }, n: number): Promise<number[]> => {
    const out = []
    for (let i = 0; i < n; i++) out.push((await me(tenant)).status)
    return out
  }

  t.same(await statuses(await createTenant(prisma), 4), [200, 200, 200, 429], 'limited through the proxy')

  proxy.cut()
  proxy.refuse()
  const lost = await createTenant(prisma)
  const whileLost = await Promise.all(Array.from({ length: 5 }, async () => await me(lost)))
  t.same(whileLost.map(r => r.status), [200, 200, 200, 200, 200], 'Redis unreachable: served, unlimited (fail open)')
  t.ok(whileLost.every(r => r.ms < 1000), `without waiting: ${whileLost.map(r => r.ms).join(', ')} ms`)

  await proxy.restore()
  const back = Date.now()
  const again = await createTenant(prisma)
  let limitedAfter: number | undefined
  if (await within(async () => (await me(again)).status === 429, 10_000, 100)) limitedAfter = Date.now() - back
  t.ok(limitedAfter !== undefined, `limits again ${limitedAfter} ms after Redis came back, without a restart`)

  proxy.freeze()
  const frozen = await createTenant(prisma)
  const whileFrozen = []
  for (let i = 0; i < 4; i++) whileFrozen.push(await me(frozen))
  t.same(whileFrozen.map(r => r.status), [200, 200, 200, 200], 'Redis frozen: served past the limit of 3 (fail open)')
  t.ok(whileFrozen.every(r => r.ms >= 200 && r.ms < 1000), `each waited for the 250 ms command timeout, no longer: ${whileFrozen.map(r => r.ms).join(', ')} ms`)
  await proxy.restore()
  t.comment(`redis faults: lost -> ${whileLost.map(r => r.ms).join('/')} ms per request; limits again ${limitedAfter} ms after it came back; frozen -> ${whileFrozen.map(r => r.ms).join('/')} ms`)
})
