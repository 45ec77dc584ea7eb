import t from 'tap'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openServerDatabase } from '../src/db/database.js'
import { buildTestApp } from './helpers/app.js'

t.test('live and ready answer without credentials', async t => {
  const { app } = await buildTestApp(t)
  const live = await app.inject({ url: '/health/live' })
  t.equal(live.statusCode, 200)
  t.same(live.json(), { status: 'ok' })
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ok', databases: { primary: 'up', replicas: [] }, caller_cache: { status: 'on', reason: null } }, 'no replicas configured; the caller cache hears changes')
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
