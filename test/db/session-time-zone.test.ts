import { Type } from '@sinclair/typebox'
import t from 'tap'
import { openServerDatabase } from '../../src/db/server-database.js'
import { Prisma as PrismaSql } from '../../src/generated/prisma/client.js'
import { findJob } from '../../src/jobs/job/find-job.js'
import { listJobs } from '../../src/jobs/list/list.js'
import { createTestDatabase, serverUrl } from '../helpers/database.js'
import { createJob, createTenant } from '../helpers/fixtures.js'

// Prisma's pg adapter reads a timestamptz's text as UTC and writes Date parameters as UTC
// wall time, whatever the session's TimeZone: on a database whose default zone is another,
// every timestamp the API shows was shifted (prisma/orm#26786). The API role's own setting
// (prisma/sql/api-role.sql) keeps its sessions in UTC.

t.test('the API role reads timestamps right on a database whose time zone is not UTC', { skip: serverUrl === undefined ? 'needs TEST_DATABASE_URL (roles and database settings are a server feature)' : false }, async t => {
  const db = await createTestDatabase()
  t.teardown(() => db.close())
  const { name } = (await db.prisma.$queryRaw<Array<{ name: string }>>`SELECT current_database() AS name`)[0]!
  await db.prisma.$executeRawUnsafe(`ALTER DATABASE "${name}" SET TimeZone = 'America/New_York'`)
  const tenant = await createTenant(db.prisma)
  const job = await createJob(db.prisma, tenant)
  const older = await createJob(db.prisma, tenant)
  await db.prisma.$executeRaw`UPDATE jobs SET created_at = '2026-01-02T03:04:05.678Z' WHERE id = ${job.id}::uuid`
  await db.prisma.$executeRaw`UPDATE jobs SET created_at = '2026-01-02T03:04:05.677Z' WHERE id = ${older.id}::uuid`

  // Connections opened after the database's setting, as the API's.
  const api = openServerDatabase(db.apiUrl!, { DB_POOL_MAX: 1, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 5000, DB_STATEMENT_TIMEOUT_MS: 5000 })
  t.teardown(() => api.close())
  const { zone } = (await api.read(async reader => await reader.rows(Type.Object({ zone: Type.String() }), PrismaSql.sql`SELECT current_setting('TimeZone') AS zone`)))[0]!
  t.equal(zone, 'UTC', 'the API role\'s sessions are in UTC')
  const found = await api.read(async reader => await findJob(reader, tenant.organizationId, job.id))
  t.equal(found?.job.createdAt.toISOString(), '2026-01-02T03:04:05.678Z', 'a job\'s created_at as stored')
  // A cursor's position is a Date parameter: the next page starts right after it.
  const next = await api.read(async reader => await listJobs(reader, tenant.organizationId, { limit: 1, after: { createdAt: found!.job.createdAt, id: job.id } }))
  t.same(next.jobs.map(j => j.job.id), [older.id], 'the page after it holds the job 1 ms older')
})
