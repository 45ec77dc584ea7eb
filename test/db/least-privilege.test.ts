import { execFileSync } from 'node:child_process'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openServerDatabase } from '../../src/db/database.js'
import { createTestDatabase, serverUrl } from '../helpers/database.js'
import { createJob, createTenant } from '../helpers/fixtures.js'

// The API as the role prisma/sql/api-role.sql creates: it can do its job, and nothing more.
t.test('the API role reads and records key use; any other write fails', { skip: serverUrl === undefined ? 'needs TEST_DATABASE_URL (roles are a server feature)' : false }, async t => {
  const db = await createTestDatabase()
  t.teardown(() => db.close())
  const role = 'screening_api_test'
  execFileSync('psql', [db.url!, '-q', '-v', `role=${role}`, '-v', 'ON_ERROR_STOP=1', '-f', 'prisma/sql/api-role.sql'])
  const tenant = await createTenant(db.prisma)
  const job = await createJob(db.prisma, tenant, { questions: 1 })
  const url = new URL(db.url!)
  url.username = role
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: url.toString() })
  const apiDb = openServerDatabase(config.DATABASE_URL!, config)
  const app = await buildApp({ config, database: apiDb })
  t.teardown(() => app.close())

  for (const path of ['/api/me', `/api/jobs/${job.id}`, `/api/jobs/${job.id}/analytics`, '/api/jobs']) {
    t.equal((await app.inject({ url: path, headers: tenant.auth })).statusCode, 200, path)
  }
  let used: Date | null = null
  for (let i = 0; i < 50 && used === null; i++) {
    await new Promise(resolve => setTimeout(resolve, 20))
    used = (await db.prisma.apiKey.findUniqueOrThrow({ where: { id: tenant.apiKeyId } })).lastUsedAt
  }
  t.ok(used, 'last_used_at recorded through the column grant')

  const denied = /permission denied/
  await t.rejects(apiDb.prisma.$executeRawUnsafe(`UPDATE jobs SET title = 'x' WHERE id = '${job.id}'`), denied, 'update a job')
  await t.rejects(apiDb.prisma.$executeRawUnsafe(`UPDATE api_keys SET revoked_at = NULL`), denied, 'update another column of api_keys')
  await t.rejects(apiDb.prisma.$executeRawUnsafe(`DELETE FROM screens`), denied, 'delete')
  await t.rejects(apiDb.prisma.$executeRawUnsafe(`INSERT INTO organizations (name) VALUES ('x')`), denied, 'insert')
  await t.rejects(apiDb.prisma.$executeRawUnsafe('SELECT * FROM _prisma_migrations'), denied, 'read the migrations table')
  const timeout = await apiDb.prisma.$queryRawUnsafe<Array<{ statement_timeout: string }>>('SHOW statement_timeout')
  t.equal(timeout[0]?.statement_timeout, '4s', 'the pool setting (DB_STATEMENT_TIMEOUT_MS) applies; the role default bounds other clients')
})
