import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { buildTestApp } from '../helpers/app.js'
import { createTestDatabase } from '../helpers/database.js'

t.test('live and ready answer without credentials', async t => {
  const { app } = await buildTestApp(t)
  const live = await app.inject({ url: '/health/live' })
  t.equal(live.statusCode, 200)
  t.same(live.json(), { status: 'ok' })
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ok' }, 'the status alone: no METRICS_TOKEN, no detail')
})

t.test('readiness detail (internal database names) only with the METRICS_TOKEN bearer', async t => {
  const token = 'metrics-token-for-tests-0123456789'
  const config = loadConfig({ LOG_LEVEL: 'silent', METRICS_TOKEN: token })
  const db = await createTestDatabase()
  // On a server, with a replica that does not answer (port 9, discard on loopback): its
  // host:port/name is what must not leak. (The embedded database takes no replicas.)
  const database = db.apiUrl === undefined
    ? { ...db, close: async () => {} }
    : openServerDatabase(db.apiUrl, config, { replicaUrls: ['postgresql://nobody@127.0.0.9:9/internal_replica_db'] })
  const app = await buildApp({ config, database })
  t.teardown(async () => { await app.close(); await db.close() })
  for (const authorization of [undefined, 'Bearer wrong-token-wrong-token', `Basic ${token}`, `Bearer ${token}x`]) {
    const res = await app.inject({ url: '/health/ready', headers: authorization === undefined ? {} : { authorization } })
    t.equal(res.statusCode, 200, `ready: ${authorization ?? 'no header'}`)
    t.same(res.json(), { status: 'ok' }, 'the status alone')
    t.notMatch(res.body, /internal_replica_db|127\.0\.0\.9/, 'no host or database name')
    t.equal(res.headers.vary, 'authorization', 'Vary: the answer depends on the credential')
  }
  const detailed = await app.inject({ url: '/health/ready', headers: { authorization: `bearer   ${token}` } })
  t.equal(detailed.statusCode, 200)
  t.match(detailed.json(), { status: 'ok', databases: { primary: 'up', replicas: db.apiUrl === undefined ? [] : [{ name: '127.0.0.9:9/internal_replica_db' }] } }, 'with the token: the detail')
  t.equal(detailed.headers['cache-control'], 'no-store')
})

t.test('ready is 503 when the database is unreachable; live stays 200', async t => {
  // Port 9 (discard) on loopback: nothing listens, connections are refused at once.
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: 'postgresql://nobody@127.0.0.1:9/none' })
  const app = await buildApp({ config, database: openServerDatabase(config.DATABASE_URL!, config) })
  t.teardown(() => app.close())
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.equal(ready.headers['retry-after'], '5')
  t.match(ready.json(), { code: 'unavailable', error: 'Service unavailable, retry later' })
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200)
})
