import t from 'tap'
import { buildTestApp } from './helpers/app.js'
import { serverUrl } from './helpers/database.js'
import { createJob, createTenant } from './helpers/fixtures.js'
import { redisUrl, skipWithoutRedis } from './helpers/redis.js'

// GET /metrics: off without METRICS_TOKEN, refused without the token, and with it the
// figures an operator alerts on, measured from requests made here.

const TOKEN = 'metrics-token-for-tests-0123456789'
const bearer = { authorization: `Bearer ${TOKEN}` }

/** The value of one sample line, or undefined when absent. */
function sample (text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line)
    if (match === null || match[1] !== name) continue
    const present = Object.fromEntries([...(match[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(m => [m[1], m[2]]))
    if (Object.entries(labels).every(([k, v]) => present[k] === v)) return Number(match[4])
  }
  return undefined
}

t.test('without METRICS_TOKEN there is no /metrics', async t => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ url: '/metrics' })
  t.equal(res.statusCode, 404)
})

t.test('with METRICS_TOKEN: the token is required, and the figures are there', async t => {
  const { app, prisma } = await buildTestApp(t, { env: { METRICS_TOKEN: TOKEN, RATE_LIMIT_MAX: '1000000' } })
  const tenant = await createTenant(prisma, { plan: 'pro' })
  const job = await createJob(prisma, tenant)

  for (const headers of [{}, { authorization: 'Bearer wrong-token-wrong-token' }, { authorization: `Basic ${TOKEN}` }, { authorization: `Bearer ${TOKEN}x` }]) {
    const res = await app.inject({ url: '/metrics', headers })
    t.equal(res.statusCode, 401, `refused: ${JSON.stringify(headers)}`)
    t.match(res.json(), { code: 'unauthorized', request_id: String }, 'in the error shape')
    t.notMatch(res.body, /http_requests_total/, 'and no figures')
  }

  for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })).statusCode, 200)
  t.equal((await app.inject({ url: '/api/jobs/00000000-0000-4000-8000-000000000000', headers: tenant.auth })).statusCode, 404)
  t.equal((await app.inject({ url: '/nowhere/at/all' })).statusCode, 404)

  const res = await app.inject({ url: '/metrics', headers: bearer })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  const text = res.body
  t.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/api/jobs/:jobId', status: '200' }), 3, 'three 200s of get job, by route template')
  t.equal(sample(text, 'http_requests_total', { method: 'GET', route: '/api/jobs/:jobId', status: '404' }), 1, 'one 404')
  t.equal(sample(text, 'http_requests_total', { route: 'unmatched', status: '404' }), 1, 'an unknown path under one bounded label')
  t.equal(sample(text, 'http_request_duration_seconds_count', { route: '/api/jobs/:jobId', status: '200' }), 3, 'latency histogram')
  t.equal(sample(text, 'http_request_duration_seconds_bucket', { route: '/api/jobs/:jobId', status: '200', le: '+Inf' }), 3)
  t.equal(sample(text, 'http_requests_total', { route: '/metrics' }), undefined, 'scrapes are not counted')
  t.equal(sample(text, 'caller_cache_misses_total'), 1, 'the first request looked the caller up')
  t.equal(sample(text, 'caller_cache_hits_total'), 3, 'the next three came from the cache')
  t.equal(sample(text, 'caller_cache_enabled'), 1)
  t.equal(sample(text, 'rate_limit_store_redis'), 0, 'counters in memory')
  t.equal(sample(text, 'rate_limit_store_up'), 1)
  t.ok(sample(text, 'process_cpu_user_seconds_total') !== undefined, 'process metrics')
  if (serverUrl !== undefined) {
    t.ok(sample(text, 'db_pool_connections', { pool: 'primary', state: 'idle' })! >= 1, 'the primary pool, idle connections')
    t.equal(sample(text, 'db_pool_connections', { pool: 'primary', state: 'waiting' }), 0)
  } else {
    t.equal(sample(text, 'db_pool_connections'), undefined, 'the embedded database has no pool')
  }

  t.equal((await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })).statusCode, 200)
  const again = (await app.inject({ url: '/metrics', headers: bearer })).body
  t.equal(sample(again, 'caller_cache_hits_total'), 4, 'counters move between scrapes')
  t.equal(sample(again, 'http_requests_total', { route: '/api/jobs/:jobId', status: '200' }), 4)

  const document = (await app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, unknown> }
  t.notOk(Object.keys(document.paths).some(p => p.includes('metrics')), 'not in the public document')
})

t.test('the rate-limit store state with Redis', { skip: skipWithoutRedis }, async t => {
  const { app } = await buildTestApp(t, { env: { METRICS_TOKEN: TOKEN, REDIS_URL: redisUrl } })
  const text = (await app.inject({ url: '/metrics', headers: bearer })).body
  t.equal(sample(text, 'rate_limit_store_redis'), 1)
  t.equal(sample(text, 'rate_limit_store_up'), 1, 'Redis connected')
})

t.test('with Redis unreachable the store is reported down (limits fail open)', async t => {
  const { app } = await buildTestApp(t, { env: { METRICS_TOKEN: TOKEN, REDIS_URL: 'redis://127.0.0.1:9' } })
  const text = (await app.inject({ url: '/metrics', headers: bearer })).body
  t.equal(sample(text, 'rate_limit_store_redis'), 1)
  t.equal(sample(text, 'rate_limit_store_up'), 0)
})
