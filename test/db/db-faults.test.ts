import { PGlite } from '@electric-sql/pglite'
import { Type } from '@sinclair/typebox'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { embeddedDatabase } from '../../src/db/embedded-database.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { isDatabaseUnavailable, replicaFailed } from '../../src/db/errors.js'
import { Prisma as PrismaSql } from '../../src/generated/prisma/client.js'
import { buildTestApp } from '../helpers/app.js'
import { assertContract } from '../helpers/contract.js'
import { serverUrl } from '../helpers/database.js'
import { sleep } from '../helpers/sleep.js'

// A database that cannot answer is a 503 `unavailable` with Retry-After, never a 500.

t.test('an unreachable database: 503 on every operation, in the documented shape', async t => {
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: 'postgresql://nobody@127.0.0.1:9/none', DB_CONNECTION_TIMEOUT_MS: '500' })
  const app = await buildApp({ config, database: openServerDatabase(config.DATABASE_URL!, config) })
  t.teardown(() => app.close())
  const key = 'srk_AAAAAAAA_' + 'A'.repeat(43)
  for (const url of ['/api/me', '/api/jobs', '/api/jobs/00000000-0000-0000-0000-000000000000', '/api/jobs/00000000-0000-0000-0000-000000000000/analytics']) {
    const res = await app.inject({ url, headers: { authorization: `Bearer ${key}` } })
    t.equal(res.statusCode, 503, url)
    t.equal(res.headers['retry-after'], '5')
    t.same(res.json(), { error: 'Service unavailable, retry later', code: 'unavailable', request_id: res.headers['x-request-id'] })
    assertContract({ method: 'GET', url, statusCode: res.statusCode, headers: res.headers, body: res.body })
  }
})

t.test('past REQUEST_TIMEOUT_MS a request is a 503 in the shared shape, whatever is still running', async t => {
  const { app } = await buildTestApp(t, {
    env: { REQUEST_TIMEOUT_MS: '100' },
    routes: app => { app.get('/hang', async () => await sleep(1000, { late: true })) },
  })
  const started = Date.now()
  const res = await app.inject({ url: '/hang' })
  t.ok(Date.now() - started < 900, `answered after ${Date.now() - started} ms`)
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '5')
  t.same(res.json(), { error: 'Service unavailable, retry later', code: 'unavailable', request_id: res.headers['x-request-id'] })
})

t.test('a query over statement_timeout is a 503, not a 500', { skip: serverUrl === undefined ? 'needs TEST_DATABASE_URL (a server enforces statement_timeout)' : false }, async t => {
  const db = openServerDatabase(serverUrl!, { DB_POOL_MAX: 1, DB_CONNECTION_TIMEOUT_MS: 1000, DB_QUERY_TIMEOUT_MS: 5000, DB_STATEMENT_TIMEOUT_MS: 100 })
  t.teardown(() => db.close())
  const error = await db.prisma.$queryRawUnsafe('SELECT pg_sleep(1)').catch((e: unknown) => e)
  t.ok(isDatabaseUnavailable(error), 'classified as unavailable')
})

t.test('errors of the reads\' path (the driver adapter) keep their meaning', async t => {
  const db = serverUrl !== undefined
    ? openServerDatabase(serverUrl, { DB_POOL_MAX: 1, DB_CONNECTION_TIMEOUT_MS: 1000, DB_QUERY_TIMEOUT_MS: 5000, DB_STATEMENT_TIMEOUT_MS: 100 })
    : embeddedDatabase(new PGlite())
  t.teardown(() => db.close())
  const failure = async (sql: PrismaSql.Sql): Promise<unknown> => await db.read(async reader => await reader.rows(Type.Unknown(), sql)).catch((e: unknown) => e)
  // What a standby raises when WAL replay cancels a read: the read runs again elsewhere.
  const conflict = await failure(PrismaSql.sql`DO $$ BEGIN RAISE EXCEPTION 'canceling statement due to conflict with recovery' USING ERRCODE = '40001'; END $$`)
  t.ok(replicaFailed(conflict), `40001 is a replica that failed: ${String(conflict)}`)
  t.match(String(conflict), /conflict with recovery/, 'with PostgreSQL\'s message')
  const bug = await failure(PrismaSql.sql`SELECT no_such_column FROM pg_class`)
  t.notOk(replicaFailed(bug) || isDatabaseUnavailable(bug), 'an undefined column is a bug: neither')
  t.match(String(bug), /no_such_column/)
  if (serverUrl !== undefined) t.ok(isDatabaseUnavailable(await failure(PrismaSql.sql`SELECT pg_sleep(1)`)), 'statement_timeout: unavailable')
})

t.test('what is and is not "unavailable"', async t => {
  t.ok(isDatabaseUnavailable({ code: 'P1001' }))
  t.ok(isDatabaseUnavailable({ code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'TooManyConnections' } } } }))
  t.ok(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')))
  t.ok(isDatabaseUnavailable({ cause: { code: '57P01' } }), 'admin shutdown')
  t.ok(isDatabaseUnavailable({ cause: { code: '53300' } }), 'too many connections')
  t.notOk(isDatabaseUnavailable(new Error('Cannot read properties of undefined')))
  t.notOk(isDatabaseUnavailable({ code: 'P2002' }), 'a unique violation is a bug here, not an outage')
  t.notOk(isDatabaseUnavailable({ cause: { code: '42703' } }), 'undefined column')
})
