import { randomBytes } from 'node:crypto'
import t from 'tap'
import { diffMigrationsToSchema } from '../../src/db/migrations.js'
import { createTestDatabase } from '../helpers/database.js'
import { createJob, createTenant } from '../helpers/fixtures.js'

const db = await createTestDatabase()
t.teardown(() => db.close())
const { prisma } = db

t.test('the migrations and prisma/schema.prisma agree (the schema engine finds nothing to do)', async t => {
  t.equal(await diffMigrationsToSchema(), '')
})

t.test('constraints live in the database', async t => {
  const tenant = await createTenant(prisma)
  const other = await createTenant(prisma)
  const job = await createJob(prisma, tenant)
  const rejects = async (name: string, sql: string, code = /23514|check constraint/) => {
    await t.rejects(prisma.$executeRawUnsafe(sql), code, name)
  }
  await rejects('a completed screen without completion time', `INSERT INTO screens (job_id, status) VALUES ('${job.id}', 'completed')`)
  await rejects('a completion before the start', `INSERT INTO screens (job_id, status, started_at, completed_at) VALUES ('${job.id}', 'completed', now(), now() - interval '1 day')`)
  await rejects('a score above 100', `INSERT INTO screens (job_id, status, completed_at, started_at, score) VALUES ('${job.id}', 'completed', now(), now(), 100.5)`)
  await rejects('a subnormal score', `INSERT INTO screens (job_id, status, completed_at, started_at, score) VALUES ('${job.id}', 'completed', now(), now(), '5e-324'::float8)`, /screens_score_representable/)
  await rejects('an unknown screen status', `INSERT INTO screens (job_id, status) VALUES ('${job.id}', 'paused')`, /invalid input value for enum|22P02/)
  await rejects('a screen of a missing job', 'INSERT INTO screens (job_id, status) VALUES (gen_random_uuid(), \'in_progress\')', /foreign key|23503/)
  await rejects('a short share token', `UPDATE jobs SET share_token = 'abc' WHERE id = '${job.id}'`)
  await rejects('an upper-case slug', `UPDATE jobs SET slug = 'Not-Safe' WHERE id = '${job.id}'`)
  await rejects('a brand color that is not #rrggbb', `UPDATE jobs SET brand_color = 'blue' WHERE id = '${job.id}'`)
  await rejects('a key hash that is not SHA-256', `INSERT INTO api_keys (user_id, name, prefix, hash) VALUES ('${tenant.userId}', 'x', 'srk_x', '\\x00')`)
  for (const [name, scopes] of [['unknown', "'{jobs:write}'"], ['empty', "'{}'"], ['NULL (Prisma reads it as empty)', 'NULL'], ['every scope and another', "'{*,jobs:read}'"], ['two dimensions', "'{{jobs:read}}'"], ['a NULL element', "'{jobs:read,NULL}'"]]) {
    await rejects(`key scopes ${name}`, `UPDATE api_keys SET scopes = ${scopes} WHERE id = '${tenant.apiKeyId}'`)
  }
  t.equal(await prisma.$executeRawUnsafe(`UPDATE api_keys SET scopes = '{analytics:read,jobs:read}' WHERE id = '${tenant.apiKeyId}'`), 1, 'known scopes pass')
  t.equal(await prisma.$executeRawUnsafe(`UPDATE api_keys SET scopes = DEFAULT WHERE id = '${tenant.apiKeyId}'`), 1, 'and the default, every scope')
  t.same((await prisma.apiKey.findUniqueOrThrow({ where: { id: tenant.apiKeyId } })).scopes, ['*'])
  await rejects('a job whose organization is not its owner\'s', `UPDATE jobs SET organization_id = '${other.organizationId}' WHERE id = '${job.id}'`, /foreign key|23503/)
  const duplicate = await createJob(prisma, tenant)
  await rejects('a duplicate slug', `UPDATE jobs SET slug = '${job.slug}' WHERE id = '${duplicate.id}'`, /unique|23505/)
  await rejects('a duplicate share token', `UPDATE jobs SET share_token = '${job.shareToken}' WHERE id = '${duplicate.id}'`, /unique|23505/)
  t.equal(await prisma.$executeRawUnsafe(`UPDATE jobs SET share_token = '${randomBytes(32).toString('hex')}' WHERE id = '${job.id}'`), 1, 'a valid update passes')
})

t.test('the database holds no raw API key', async t => {
  const tenant = await createTenant(prisma)
  // Not split('_'): base64url secrets contain '_' themselves.
  const secret = tenant.key.slice('srk_12345678_'.length)
  const rows = await prisma.$queryRawUnsafe<Array<{ row: string }>>('SELECT row_to_json(k)::text AS row FROM api_keys k')
  t.ok(rows.length > 0)
  for (const { row } of rows) {
    t.notOk(row.includes(tenant.key), 'no key')
    t.notOk(row.includes(secret), 'no secret part')
  }
  const stored = await prisma.apiKey.findUniqueOrThrow({ where: { id: tenant.apiKeyId } })
  t.equal(Buffer.from(stored.hash).toString('hex'), (await import('node:crypto')).createHash('sha256').update(tenant.key).digest('hex'), 'only its SHA-256')
  t.equal(stored.prefix, tenant.key.slice(0, 12), 'and the readable prefix')
})
