import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { API_ROLE, serverUrl } from '../helpers/database.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { within } from '../helpers/until.js'

// The API as the role prisma/sql/api-role.sql creates (every server-database test runs the
// app that way): it can do its job, and nothing more.
t.test('the API role reads and records key use; any other write fails', { skip: serverUrl === undefined ? 'needs TEST_DATABASE_URL (roles are a server feature)' : false }, async t => {
  const { app, prisma } = await buildTestApp(t)
  const tenant = await createTenant(prisma)
  const job = await createJob(prisma, tenant, { questions: 1 })
  const [whoami] = await app.database.prisma.$queryRawUnsafe<Array<{ user: string }>>('SELECT current_user AS user')
  t.equal(whoami?.user, API_ROLE, 'the app connects as the API role')

  for (const path of ['/api/me', `/api/jobs/${job.id}`, `/api/jobs/${job.id}/analytics`, '/api/jobs']) {
    t.equal((await app.inject({ url: path, headers: tenant.auth })).statusCode, 200, path)
  }
  let used: Date | null = null
  await within(async () => (used = (await prisma.apiKey.findUniqueOrThrow({ where: { id: tenant.apiKeyId } })).lastUsedAt) !== null, 1000, 20)
  t.ok(used, 'last_used_at recorded through the column grant')

  const denied = /permission denied/
  await t.rejects(app.database.prisma.$executeRawUnsafe(`UPDATE jobs SET title = 'x' WHERE id = '${job.id}'`), denied, 'update a job')
  await t.rejects(app.database.prisma.$executeRawUnsafe('UPDATE api_keys SET revoked_at = NULL'), denied, 'update another column of api_keys')
  await t.rejects(app.database.prisma.$executeRawUnsafe('DELETE FROM screens'), denied, 'delete')
  await t.rejects(app.database.prisma.$executeRawUnsafe("INSERT INTO organizations (name) VALUES ('x')"), denied, 'insert')
  await t.rejects(app.database.prisma.$executeRawUnsafe('SELECT * FROM _prisma_migrations'), denied, 'read the migrations table')
  await t.rejects(app.database.prisma.$executeRawUnsafe('CREATE TABLE intruder (id int)'), /permission denied/, 'create a table')
  const timeout = await app.database.prisma.$queryRawUnsafe<Array<{ statement_timeout: string }>>('SHOW statement_timeout')
  t.equal(timeout[0]?.statement_timeout, '4s', 'the pool setting (DB_STATEMENT_TIMEOUT_MS) applies; the role default bounds other clients')
  t.equal((await prisma.job.findUniqueOrThrow({ where: { id: job.id } })).title, 'Test Job', 'nothing changed')
})
