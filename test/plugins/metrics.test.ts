import { readFileSync } from 'node:fs'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import type { ReplicaState } from '../../src/db/replica-state.js'
import { apiDatabase, buildTestApp } from '../helpers/app.js'
import { createTestDatabase, serverUrl } from '../helpers/database.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { redisUrl, skipWithoutRedis } from '../helpers/redis.js'

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

/** How many samples of a metric there are (series, for a gauge or counter). */
const series = (text: string, name: string): number => text.split('\n').filter(l => l.startsWith(`${name}{`) || l.startsWith(`${name} `)).length

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
    t.equal(res.headers['www-authenticate'], 'Bearer')
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
  t.equal(sample(text, 'http_request_duration_seconds_bucket', { route: '/api/jobs/:jobId', status: '200', le: '5' }), 3, 'up to 5 s')
  const fastest = sample(text, 'http_request_duration_seconds_bucket', { route: '/api/jobs/:jobId', status: '200', le: '0.001' })
  t.ok(fastest !== undefined && fastest <= 3, 'from 1 ms')
  t.ok(sample(text, 'http_request_duration_seconds_sum', { route: '/api/jobs/:jobId', status: '200' })! > 0, 'real durations')
  t.equal(sample(text, 'http_requests_total', { route: '/metrics' }), undefined, 'scrapes are not counted')
  t.equal(sample(text, 'caller_cache_misses_total'), 1, 'the first request looked the caller up')
  t.equal(sample(text, 'caller_cache_hits_total'), 3, 'the next three came from the cache')
  t.equal(sample(text, 'caller_cache_enabled'), 1)
  t.same(['disabled', 'starting', 'disconnected', 'no_echo', 'no_probe'].map(reason => sample(text, 'caller_cache_off_reason', { reason })), [0, 0, 0, 0, 0], 'on: no reason to be off')
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

t.test('/metrics takes the metrics token only, and is neither rate limited nor behind an API key', async t => {
  const { app, prisma } = await buildTestApp(t, { env: { METRICS_TOKEN: TOKEN, RATE_LIMIT_MAX: '1', AUTH_FAILURE_LIMIT: '1' } })
  const tenant = await createTenant(prisma)
  for (let i = 0; i < 4; i++) {
    const res = await app.inject({ url: '/metrics', headers: { authorization: `bearer ${TOKEN}` } })
    t.equal(res.statusCode, 200, `scrape ${i + 1}: the scheme in any case, past RATE_LIMIT_MAX`)
    t.equal(res.headers['x-ratelimit-limit'], undefined, 'no rate-limit headers')
    t.equal(res.headers['cache-control'], 'no-store')
  }
  for (let i = 0; i < 3; i++) {
    t.equal((await app.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong-token-wrong-token' } })).statusCode, 401, 'a wrong token: 401, not the failed-authentication 429')
  }
  t.equal((await app.inject({ url: '/metrics', headers: tenant.auth })).statusCode, 401, 'an API key is not the metrics token')
  t.equal((await app.inject({ url: '/api/me', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, 401, 'nor the metrics token an API key')
  t.equal((await app.inject({ method: 'HEAD', url: '/metrics' })).statusCode, 401, 'HEAD too')
})

t.test('pools and replicas are read at scrape time, one series per replica whatever its state', async t => {
  const db = await createTestDatabase()
  const config = loadConfig({ LOG_LEVEL: 'silent', METRICS_TOKEN: TOKEN })
  const database = apiDatabase(db, config)
  const replicas: ReplicaState[] = [
    { name: 'r1.internal:5432/screening', status: 'unknown', reason: null, lagMs: null },
    { name: 'r2.internal:5432/screening', status: 'up', reason: null, lagMs: 120 },
  ]
  let pools = [{ pool: 'primary', total: 7, idle: 4, waiting: 0 }]
  const app = await buildApp({ config, database: { ...database, replicas: () => replicas, pools: () => pools } })
  t.teardown(async () => { await app.close(); await db.close() })
  const scrape = async (): Promise<string> => (await app.inject({ url: '/metrics', headers: bearer })).body

  let text = await scrape()
  t.equal(sample(text, 'db_pool_connections', { pool: 'primary', state: 'in_use' }), 3, 'in use: total - idle')
  t.equal(sample(text, 'db_pool_connections', { pool: 'primary', state: 'idle' }), 4)
  t.equal(sample(text, 'db_pool_connections', { pool: 'primary', state: 'waiting' }), 0)
  t.equal(sample(text, 'db_replica_up', { replica: 'r1.internal:5432/screening' }), 0, 'not checked yet: takes no reads')
  t.equal(sample(text, 'db_replica_up', { replica: 'r2.internal:5432/screening' }), 1)
  t.equal(sample(text, 'db_replica_lag_seconds', { replica: 'r2.internal:5432/screening' }), 0.12)
  t.equal(sample(text, 'db_replica_lag_seconds', { replica: 'r1.internal:5432/screening' }), undefined, 'no lag before a check')
  t.equal(sample(text, 'db_replica_status', { replica: 'r1.internal:5432/screening', status: 'unknown' }), 1)

  replicas[1] = { ...replicas[1]!, status: 'lagging', lagMs: 9000 }
  pools = [{ pool: 'primary', total: 10, idle: 0, waiting: 5 }, { pool: 'replica r2.internal:5432/screening', total: 2, idle: 2, waiting: 0 }]
  text = await scrape()
  t.equal(sample(text, 'db_replica_up', { replica: 'r2.internal:5432/screening' }), 0, 'lagging: skipped')
  t.equal(sample(text, 'db_replica_lag_seconds', { replica: 'r2.internal:5432/screening' }), 9)
  t.equal(sample(text, 'db_pool_connections', { pool: 'primary', state: 'waiting' }), 5)
  t.equal(sample(text, 'db_pool_connections', { pool: 'replica r2.internal:5432/screening', state: 'idle' }), 2)
  replicas[1] = { ...replicas[1]!, status: 'down', reason: 'not_in_recovery', lagMs: null }
  text = await scrape()
  // A label besides `replica` would start a new series at each change of state (and restart an alert's `for:`).
  t.same(text.split('\n').filter(l => l.startsWith('db_replica_up')).sort(), [
    'db_replica_up{replica="r1.internal:5432/screening"} 0',
    'db_replica_up{replica="r2.internal:5432/screening"} 0',
  ], 'one series per replica, labelled by the replica only')
  t.equal(sample(text, 'db_replica_status', { replica: 'r2.internal:5432/screening', status: 'down' }), 1)
  t.equal(sample(text, 'db_replica_status', { replica: 'r2.internal:5432/screening', status: 'lagging' }), 0, 'every state always present')
  t.equal(series(text, 'db_replica_status'), 8, 'four states a replica')
  t.equal(sample(text, 'db_replica_down_reason', { replica: 'r2.internal:5432/screening', reason: 'not_in_recovery' }), 1, 'why it is down')
  t.equal(sample(text, 'db_replica_down_reason', { replica: 'r2.internal:5432/screening', reason: 'unreachable' }), 0)
  t.equal(sample(text, 'db_replica_down_reason', { replica: 'r1.internal:5432/screening', reason: 'not_in_recovery' }), 0, 'not down: no reason')
  t.equal(sample(text, 'db_replica_down_reason', { replica: 'r2.internal:5432/screening', reason: 'other_cluster' }), 0)
  t.equal(series(text, 'db_replica_down_reason'), 14, 'seven reasons a replica, always present')
  t.equal(sample(text, 'db_replica_lag_seconds', { replica: 'r2.internal:5432/screening' }), undefined, 'lag unknown while down')
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

t.test('every metric docs/operations.md names is in a scrape', async t => {
  const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8')
  // Backticked names of the metrics' families; the log's reason codes share a prefix and are no metrics.
  const notMetrics = new Set(['rate_limit_per_key', 'rate_limit_failed_auth'])
  const named = [...new Set([...doc.matchAll(/`((?:http|db|rate_limit|caller_cache|webhook|process|nodejs)_[a-z_]+)[`{]/g)].map(m => m[1]!))].filter(n => !notMetrics.has(n))
  t.ok(named.length >= 12, `the page names ${named.length} metrics: ${named.join(', ')}`)
  const db = await createTestDatabase()
  const config = loadConfig({ LOG_LEVEL: 'silent', METRICS_TOKEN: TOKEN })
  const database = apiDatabase(db, config)
  const replicas: ReplicaState[] = [{ name: 'r1.internal:5432/screening', status: 'up', reason: null, lagMs: 10 }]
  const app = await buildApp({ config, database: { ...database, replicas: () => replicas } })
  t.teardown(async () => { await app.close(); await db.close() })
  const text = (await app.inject({ url: '/metrics', headers: bearer })).body
  const families = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map(m => m[1]!))
  for (const name of named) t.ok(families.has(name), `${name}: in the scrape`)
})
