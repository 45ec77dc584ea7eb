import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import t from 'tap'
import { foldScreenStats, verifyScreenStats } from '../../src/admin/screen-stats.js'
import { embeddedDatabase } from '../../src/db/embedded-database.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { applyMigrations, migrationsDir } from '../../src/db/migrations.js'
import { findJob } from '../../src/jobs/job/find-job.js'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'
import { MIN_NORMAL_DOUBLE } from '../helpers/property.js'
import { clientReader } from '../../src/db/sql-reader.js'
import { sleep } from '../helpers/sleep.js'

// Rows nobody here chose (issue 21): a job whose id changes, completion times the summaries
// cannot place, scores that need 17 digits, and a migration that needs a lock while a long
// reader holds one.

const { app, prisma, db } = await buildTestApp(t, { env: { SUMMARY_FOLD_INTERVAL_MS: '0' } })
const DELTAS = '20261123200000_summary_deltas'
const SCORES = '20261125180000_scores_representable'
const SCORES_VALIDATE = '20261125180100_scores_representable_validate'
const at = (iso: string): Date => new Date(iso)
const started = at('1899-01-01T00:00:00Z')
const clean = { jobs: 0, segments: 0, quarters: 0, malformed: 0, jobIds: [] }

/** The message of a rejected promise, driver layers included. */
async function failure (promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    return `${(error as Error).message} ${JSON.stringify(error)}`
  }
  return 'no error'
}

/** An embedded database migrated up to (not including) `first`, with every migration's name. */
async function migratedBefore (t: { teardown: (fn: () => unknown) => void }, first: string): Promise<{ pglite: PGlite, names: string[] }> {
  const before = await mkdtemp(join(tmpdir(), 'screening-migrations-'))
  t.teardown(() => rm(before, { recursive: true, force: true }))
  await cp(migrationsDir, before, { recursive: true })
  const names = (await readdir(before)).filter(n => /^\d{14}_/.test(n)).sort()
  for (const name of names.filter(n => n >= first)) await rm(join(before, name), { recursive: true })
  const pglite = new PGlite()
  t.teardown(() => pglite.close())
  await applyMigrations(new PrismaPGlite(pglite), before)
  return { pglite, names }
}

t.test('a job\'s id cannot change: refused, and its figures stay as they were', async t => {
  const tenant = await createTenant(prisma)
  const job = await createJob(prisma, tenant)
  await createScreens(prisma, job.id, [
    { status: 'completed', score: 50, completedAt: at('2026-01-04T23:30:00Z'), startedAt: at('2026-01-01T00:00:00Z') },
    { status: 'in_progress' },
  ])
  await foldScreenStats(prisma)
  const before = await findJob(clientReader(prisma), tenant.organizationId, job.id)
  const message = await failure(prisma.$executeRaw`UPDATE jobs SET id = gen_random_uuid() WHERE id = ${job.id}::uuid`)
  t.match(message, /the id of job .* cannot change/, message.slice(0, 200))
  t.same(await findJob(clientReader(prisma), tenant.organizationId, job.id), before, 'the job and its figures are unchanged')
  t.same((await verifyScreenStats(prisma)).drift, clean)
  t.equal(await prisma.$executeRaw`UPDATE jobs SET title = 'renamed' WHERE id = ${job.id}::uuid`, 1, 'other columns still change')
})

t.test('a job deleted before its deltas were folded, then created again with its id, starts from nothing', async t => {
  const tenant = await createTenant(prisma)
  const job = await createJob(prisma, tenant)
  await createScreens(prisma, job.id, [
    { status: 'completed', score: 80, completedAt: at('2026-02-04T10:00:00Z'), startedAt: at('2026-02-01T00:00:00Z') },
    { status: 'expired' },
  ])
  const [row] = await prisma.$queryRaw<Array<Record<string, unknown>>>`SELECT * FROM jobs WHERE id = ${job.id}::uuid`
  // No fold in between (this app's fold is off): the two screens are still unfolded deltas.
  t.equal(await prisma.$executeRaw`DELETE FROM jobs WHERE id = ${job.id}::uuid`, 1)
  // A restore, or a client that chooses its ids: the same id, no screens.
  await prisma.$executeRawUnsafe('INSERT INTO jobs SELECT * FROM json_populate_record(NULL::jobs, $1::json)', JSON.stringify(row))
  const found = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
  t.equal(found.statusCode, 200)
  t.equal(found.json().interview_count, 0, 'the deleted job\'s screens are not counted')
  t.equal(found.json().average_score, null)
  const analytics = await app.inject({ url: `/api/jobs/${job.id}/analytics`, headers: tenant.auth })
  t.same(analytics.json().interviews_by_status, { completed: 0, in_progress: 0, expired: 0 }, 'nor in its analytics')
  await foldScreenStats(prisma)
  t.equal((await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })).json().interview_count, 0, 'nor after a fold')
  t.same((await verifyScreenStats(prisma)).drift, clean)
})

t.test('a completion time the summaries cannot place is refused by a CHECK', async t => {
  const tenant = await createTenant(prisma)
  const job = await createJob(prisma, tenant)
  for (const value of ['infinity', '3000-01-01T00:00:00Z', '1899-12-31T23:59:59Z']) {
    const message = await failure(prisma.$executeRaw`INSERT INTO screens (job_id, status, started_at, completed_at) VALUES (${job.id}::uuid, 'completed', '-infinity', ${value}::timestamptz)`)
    t.match(message, /screens_completed_at_placeable/, `${value}: ${message.slice(0, 160)}`)
  }
  await createScreens(prisma, job.id, ['1900-01-01T00:00:00Z', '2999-12-31T23:59:59Z'].map(iso => ({ status: 'completed' as const, score: 1, completedAt: at(iso), startedAt: started })))
  const message = await failure(prisma.$executeRaw`UPDATE screens SET completed_at = 'infinity' WHERE job_id = ${job.id}::uuid`)
  t.match(message, /screens_completed_at_placeable/, 'nor can an update put one there')
  const found = await app.inject({ url: `/api/jobs/${job.id}/analytics`, headers: tenant.auth })
  t.equal(found.statusCode, 200)
  t.same(found.json().average_score_by_week.map((w: { week: string }) => w.week), ['1900-01-01', '2999-12-30'], 'the bounds themselves are placed')
  t.same((await verifyScreenStats(prisma)).drift, clean)
})

t.test('averages are exact to the stored doubles (17 significant digits), whatever the writer\'s extra_float_digits', async t => {
  const tenant = await createTenant(prisma)
  const single = await createJob(prisma, tenant)
  const pair = await createJob(prisma, tenant)
  const updated = await createJob(prisma, tenant)
  const completedAt = at('2026-03-04T12:00:00Z')
  const startedAt = at('2026-03-01T00:00:00Z')
  await createScreens(prisma, single.id, [{ status: 'completed', score: 33.333333333333336, completedAt, startedAt }])
  // A writer whose session prints doubles with 15 digits (extra_float_digits 0): the sum must
  // not depend on it. (One connection on the embedded database; its own on a server.)
  await prisma.$transaction(async tx => {
    await tx.$executeRawUnsafe('SET LOCAL extra_float_digits = 0')
    await tx.$executeRaw`INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES (${pair.id}::uuid, 'completed', 0.1, ${startedAt}, ${completedAt}), (${pair.id}::uuid, 'completed', 0.2, ${startedAt}, ${completedAt})`
    // Single-row writes take other paths (no aggregate; updates row by row): the same rule.
    const [inserted] = await tx.$queryRaw<Array<{ id: string }>>`INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES (${updated.id}::uuid, 'completed', 0.1, ${startedAt}, ${completedAt}) RETURNING id::text`
    await tx.$executeRaw`UPDATE screens SET score = 0.30000000000000004 WHERE id = ${inserted!.id}::uuid`
  })
  for (const fold of [false, true]) {
    if (fold) await foldScreenStats(prisma)
    const label = fold ? 'folded' : 'in deltas'
    // 33.333333333333336 is the stored double; the mean of 0.1 and 0.2 is 0.15 exactly, where
    // adding the doubles gives 0.15000000000000002.
    // 0.30000000000000004 printed with 15 digits is 0.3.
    for (const [job, count, want] of [[single, 1, 33.333333333333336], [pair, 2, 0.15], [updated, 1, 0.30000000000000004]] as const) {
      const got = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
      t.equal(got.json().average_score, want, `get job (${label})`)
      const weeks = await app.inject({ url: `/api/jobs/${job.id}/analytics`, headers: tenant.auth })
      t.same(weeks.json().average_score_by_week, [{ week: '2026-03-02', count, average_score: want }], `analytics (${label})`)
    }
  }
  t.same((await verifyScreenStats(prisma)).drift, clean)
})

t.test('a subnormal score is refused by a CHECK; means of the smallest normal one are answered', async t => {
  const tenant = await createTenant(prisma)
  const job = await createJob(prisma, tenant)
  const completedAt = at('2026-03-04T12:00:00Z')
  const startedAt = at('2026-03-01T00:00:00Z')
  for (const value of [Number.MIN_VALUE, 1e-310, MIN_NORMAL_DOUBLE / 2]) {
    const message = await failure(prisma.$executeRaw`INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES (${job.id}::uuid, 'completed', ${value}::float8, ${startedAt}, ${completedAt})`)
    t.match(message, /screens_score_representable/, `${value}: ${message.slice(0, 160)}`)
  }
  await createScreens(prisma, job.id, [MIN_NORMAL_DOUBLE, 0, 0].map(score => ({ status: 'completed' as const, score, completedAt, startedAt })))
  const message = await failure(prisma.$executeRaw`UPDATE screens SET score = ${Number.MIN_VALUE}::float8 WHERE job_id = ${job.id}::uuid`)
  t.match(message, /screens_score_representable/, 'nor can an update put one there')
  // The mean, a third of the smallest normal double, is itself subnormal: answered, not a 500.
  const want = MIN_NORMAL_DOUBLE / 3
  for (const fold of [false, true]) {
    if (fold) await foldScreenStats(prisma)
    const got = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
    t.equal(got.statusCode, 200)
    t.equal(got.json().average_score, want, `get job (${fold ? 'folded' : 'in deltas'})`)
    const weeks = await app.inject({ url: `/api/jobs/${job.id}/analytics`, headers: tenant.auth })
    t.same(weeks.json().average_score_by_week, [{ week: '2026-03-02', count: 3, average_score: want }], 'analytics')
    t.equal((await app.inject({ url: '/api/jobs', headers: tenant.auth })).statusCode, 200, 'the list')
  }
  t.same((await verifyScreenStats(prisma)).drift, clean)
})

t.test(`the migration ${SCORES} stops on subnormal scores already present, saying which`, async t => {
  const { pglite, names } = await migratedBefore(t, SCORES)
  const old = embeddedDatabase(pglite)
  const tenant = await createTenant(old.prisma)
  const job = await createJob(old.prisma, tenant)
  // Before this release, a mean of it with zeros answered 500 (out of range for type double precision).
  await createScreens(old.prisma, job.id, [Number.MIN_VALUE, 0, 0].map(score => ({ status: 'completed' as const, score, completedAt: at('2026-03-04T12:00:00Z'), startedAt: at('2026-03-01T00:00:00Z') })))
  const message = await failure(applyMigrations(new PrismaPGlite(pglite)))
  t.match(message, /1 screen\(s\) have a subnormal score/, message.slice(0, 300))
  t.match(message, /SET score = 0/, 'the hint says how to correct them')
  await old.prisma.$executeRaw`UPDATE screens SET score = 0 WHERE job_id = ${job.id}::uuid AND score > 0`
  await old.prisma.$executeRawUnsafe(`DELETE FROM _prisma_migrations WHERE migration_name = '${SCORES_VALIDATE}' AND finished_at IS NULL`)
  t.same(await applyMigrations(new PrismaPGlite(pglite)), names.filter(n => n >= SCORES_VALIDATE))
  t.same((await verifyScreenStats(old.prisma)).drift, clean, 'the summaries stay exact')
  const found = await findJob(clientReader(old.prisma), tenant.organizationId, job.id)
  t.equal(found?.averageScore, 0)
})

t.test(`the migration ${DELTAS} stops on completion times it cannot place, saying which`, async t => {
  const { pglite, names } = await migratedBefore(t, DELTAS)
  const old = embeddedDatabase(pglite)
  const tenant = await createTenant(old.prisma)
  const job = await createJob(old.prisma, tenant)
  // The earlier triggers could not place it either: written with them off, as a restore would.
  await old.prisma.$executeRawUnsafe('ALTER TABLE screens DISABLE TRIGGER USER')
  await old.prisma.$executeRaw`INSERT INTO screens (job_id, status, started_at, completed_at) VALUES (${job.id}::uuid, 'completed', '-infinity', 'infinity')`
  await old.prisma.$executeRawUnsafe('ALTER TABLE screens ENABLE TRIGGER USER')
  const message = await failure(applyMigrations(new PrismaPGlite(pglite)))
  t.match(message, /1 screen\(s\) have a completion time the summaries cannot place/, message.slice(0, 300))
  t.match(message, /DISABLE TRIGGER USER/, 'the hint says how to correct them')
  // Corrected by a person as the hint says, the migration goes through (it rolled back whole;
  // marked rolled back, it is pending again).
  await old.prisma.$executeRawUnsafe('ALTER TABLE screens DISABLE TRIGGER USER')
  await old.prisma.$executeRaw`UPDATE screens SET completed_at = '2026-01-01', started_at = '2025-12-01' WHERE job_id = ${job.id}::uuid`
  await old.prisma.$executeRawUnsafe('ALTER TABLE screens ENABLE TRIGGER USER')
  await old.prisma.$executeRawUnsafe(`DELETE FROM _prisma_migrations WHERE migration_name = '${DELTAS}' AND finished_at IS NULL`)
  t.same(await applyMigrations(new PrismaPGlite(pglite)), names.filter(n => n >= DELTAS))
  t.same((await verifyScreenStats(old.prisma)).drift, clean, 'and the summaries are rebuilt exact')
})

t.test('a migration that needs an exclusive lock waits behind a long reader without stalling the API', { skip: db.url === undefined ? 'needs a PostgreSQL server (TEST_DATABASE_URL): the embedded database has one connection' : false }, async t => {
  const tenant = await createTenant(prisma)
  const job = await createJob(prisma, tenant)
  const dir = await mkdtemp(join(tmpdir(), 'screening-migrations-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await cp(migrationsDir, dir, { recursive: true })
  // A later migration that needs ACCESS EXCLUSIVE on a table every get job reads.
  await mkdir(join(dir, '29990101000000_probe'))
  await writeFile(join(dir, '29990101000000_probe', 'migration.sql'), 'ALTER TABLE job_screen_stats ADD COLUMN probe INTEGER;\n')

  // A long reader: a report, a pg_dump.
  const reader = new pg.Client({ connectionString: db.url })
  await reader.connect()
  await reader.query('BEGIN')
  await reader.query('SELECT count(*) FROM job_screen_stats')

  const owner = openServerDatabase(db.url!, { DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 0, DB_STATEMENT_TIMEOUT_MS: 0 })
  t.teardown(() => owner.close())
  let retries = 0
  const migrating = applyMigrations(owner.adapterFactory, dir, { lockTimeoutMs: 100, retryForMs: 60_000, onRetry: () => { retries++ } })
  let done = false
  void migrating.finally(() => { done = true })

  // The API meanwhile: every get job answered, none held behind the migration's lock request.
  const latencies: number[] = []
  const until = Date.now() + 2500
  while (Date.now() < until) {
    const startedAt = performance.now()
    const res = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
    latencies.push(performance.now() - startedAt)
    t.equal(res.statusCode, 200)
    await sleep(20)
  }
  t.notOk(done, 'the migration is still waiting for the reader')
  await reader.query('COMMIT')
  await reader.end()
  t.same(await migrating, ['29990101000000_probe'], 'and goes through once the reader is done')
  const worst = Math.max(...latencies)
  t.comment(`figures: migration behind a reader: ${retries} attempts given up after 100 ms, ${latencies.length} API reads meanwhile, slowest ${worst.toFixed(0)} ms`)
  t.ok(retries > 0, 'it gave up and retried')
  t.ok(worst < 1000, `no API read waited behind it (slowest ${worst.toFixed(0)} ms)`)
})
