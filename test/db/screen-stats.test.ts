import { spawnSync } from 'node:child_process'
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import t from 'tap'
import { foldScreenStats, verifyScreenStats } from '../../src/admin/screen-stats.js'
import { embeddedDatabase } from '../../src/db/embedded-database.js'
import { applyMigrations, migrationsDir } from '../../src/db/migrations.js'
import { jobAnalytics as versionedAnalytics } from '../../src/jobs/analytics/read.js'
import { findJob } from '../../src/jobs/job/find-job.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'
import { createTestDatabase } from '../helpers/database.js'
import { onReadAnalytics, onReadJobStats } from '../helpers/on-read.js'
import { inZone } from '../helpers/zones.js'
import { zoneRules } from '../../src/zones/rules.js'
import { storeZoneRules } from '../../src/zones/store.js'
import { clientReader } from '../../src/db/sql-reader.js'

// The summaries' upkeep outside the API: the drift check and its repair, the migration's
// backfill of existing screens, and the statements that bypass row triggers.

const db = await createTestDatabase()
t.teardown(() => db.close())
const { prisma } = db
const SUMMARIES = '20261123090000_screen_summaries'
const BOUNDARIES = '20261123120000_completion_boundaries'

const at = (iso: string): Date => new Date(iso)
// The figures only: the on-read computation has no version.
const jobAnalytics = async (...args: Parameters<typeof versionedAnalytics>) => {
  const rows = await versionedAnalytics(...args)
  return rows === null ? null : { byStatus: rows.byStatus, weeks: rows.weeks }
}
async function jobWithScreens (tenant: Awaited<ReturnType<typeof createTenant>>) {
  const job = await createJob(prisma, tenant)
  await createScreens(prisma, job.id, [
    { status: 'completed', score: 80, completedAt: at('2026-01-04T23:30:00Z'), startedAt: at('2026-01-01T00:00:00Z') },
    { status: 'completed', score: 65.5, completedAt: at('2026-01-05T00:30:00Z'), startedAt: at('2026-01-01T00:00:00Z') },
    { status: 'completed', score: null, completedAt: at('2026-01-07T12:00:00Z'), startedAt: at('2026-01-01T00:00:00Z') },
    { status: 'in_progress' },
    { status: 'expired', score: 10 },
  ])
  return job
}

t.test('verify-stats finds summaries damaged on purpose, and --fix repairs them', async t => {
  const tenant = await createTenant(prisma)
  const [a, b, c, d] = [await jobWithScreens(tenant), await jobWithScreens(tenant), await jobWithScreens(tenant), await jobWithScreens(tenant)]
  // Two completions alike in one window, on both sides of Monday 00:00 UTC.
  const e = await createJob(prisma, tenant)
  await createScreens(prisma, e.id, ['2026-01-04T23:30:00Z', '2026-01-05T00:30:00Z'].map(iso => ({ status: 'completed' as const, score: 50, completedAt: at(iso), startedAt: at('2026-01-01T00:00:00Z') })))
  const clean = { jobs: 0, segments: 0, quarters: 0, malformed: 0, jobIds: [] }
  t.same((await verifyScreenStats(prisma)).drift, clean, 'the triggers leave no drift (deltas unfolded)')
  t.ok(await foldScreenStats(prisma) > 0, 'deltas folded')
  t.same((await verifyScreenStats(prisma)).drift, clean, 'nor does the fold')

  await prisma.$executeRaw`UPDATE job_screen_stats SET expired = expired + 1 WHERE job_id = ${a.id}::uuid`
  await prisma.$executeRaw`UPDATE job_completion_segments SET score_sum = score_sum + 0.5 WHERE job_id = ${b.id}::uuid AND segment = (SELECT min(segment) FROM job_completion_segments WHERE job_id = ${b.id}::uuid)`
  await prisma.$executeRaw`DELETE FROM job_completion_segments WHERE job_id = ${c.id}::uuid AND segment = (SELECT max(segment) FROM job_completion_segments WHERE job_id = ${c.id}::uuid)`
  // The first of the window's two running totals: its quarter hour gains one, the next loses one.
  await prisma.$executeRaw`UPDATE job_completion_boundaries SET completed_through[1] = completed_through[1] + 1 WHERE job_id = ${d.id}::uuid`
  // The window's two quarter hours swapped: each still carries the same figures, so they add
  // up quarter hour by quarter hour, but the running totals are out of order (in UTC, both
  // completions would land in one week).
  t.equal(await prisma.$executeRaw`UPDATE job_completion_boundaries SET quarters = ARRAY[quarters[2], quarters[1]] WHERE job_id = ${e.id}::uuid AND cardinality(quarters) = 2`, 1)
  t.not(JSON.stringify(await jobAnalytics(clientReader(prisma), tenant.organizationId, e.id, inZone('UTC'))), JSON.stringify(await onReadAnalytics(prisma, e.id, 'UTC')), 'that damage changes the answer')
  const found = await verifyScreenStats(prisma)
  t.same(found.drift, { jobs: 1, segments: 2, quarters: 2, malformed: 1, jobIds: [a.id, b.id, c.id, d.id, e.id].sort() }, 'each damage is found, and nothing else')
  t.same(found.repaired, [], 'without --fix, nothing is changed')
  t.equal((await verifyScreenStats(prisma)).drift.jobs, 1, 'still there')

  const fixed = await verifyScreenStats(prisma, { fix: true })
  t.same(fixed.repaired, [a.id, b.id, c.id, d.id, e.id].sort())
  t.same(fixed.drift, clean, 'no drift after the repair')
  t.same((await verifyScreenStats(prisma)).drift, clean, 'a whole check agrees')
  await foldScreenStats(prisma)
  t.same((await verifyScreenStats(prisma)).drift, clean, 'and once the repair is folded')
  for (const job of [a, b, c, d, e]) {
    const found = await findJob(clientReader(prisma), tenant.organizationId, job.id)
    t.same({ interviewCount: found?.interviewCount, averageScore: found?.averageScore }, await onReadJobStats(prisma, job.id), 'get job answers as on read')
    for (const tz of ['Asia/Kathmandu', 'UTC']) {
      t.same(await jobAnalytics(clientReader(prisma), tenant.organizationId, job.id, inZone(tz)), await onReadAnalytics(prisma, job.id, tz), `analytics answer as on read (${tz})`)
    }
  }
})

// A version is changes:time:hash.
const changesOf = (version: string): bigint => BigInt(version.split(':')[0]!)
const timeOf = (version: string): bigint => BigInt(version.split(':')[1]!)

t.test('a version counts changes: a fold keeps it, a repair and a rebuild move it on', async t => {
  const tenant = await createTenant(prisma)
  const job = await jobWithScreens(tenant)
  const version = async () => (await versionedAnalytics(clientReader(prisma), tenant.organizationId, job.id, inZone('UTC')))!.version
  const before = await version()
  t.match(before, /^\d+:\d+:-?\d+$/, `changes:time:hash: ${before}`)
  await foldScreenStats(prisma)
  t.equal(await version(), before, 'a fold changes no figure, nor the version')
  await prisma.$executeRaw`UPDATE job_screen_stats SET completed = completed + 1 WHERE job_id = ${job.id}::uuid`
  await verifyScreenStats(prisma, { fix: true })
  const repaired = await version()
  t.ok(changesOf(repaired) > changesOf(before) && timeOf(repaired) > timeOf(before), `${repaired} after ${before}`)
  await prisma.$executeRaw`SELECT rebuild_screen_summaries(ARRAY[${job.id}::uuid])`
  const rebuilt = await version()
  t.ok(changesOf(rebuilt) > changesOf(repaired) && timeOf(rebuilt) > timeOf(repaired), `${rebuilt} after ${repaired}`)
})

t.test('a version never comes back: after a backup of the summaries is put back, the next write moves past what was given out since', async t => {
  const tenant = await createTenant(prisma)
  const job = await jobWithScreens(tenant)
  const version = async () => (await versionedAnalytics(clientReader(prisma), tenant.organizationId, job.id, inZone('UTC')))!.version
  await foldScreenStats(prisma)
  const backup = await prisma.$queryRaw<Array<{ slot: number, version: bigint, changes: bigint, hash: bigint }>>`SELECT slot, version, changes, changes_hash AS hash FROM job_screen_stats WHERE job_id = ${job.id}::uuid`
  const given: string[] = [await version()]
  for (let i = 0; i < 3; i++) {
    await prisma.screen.updateMany({ where: { jobId: job.id, status: 'completed', score: { not: null } }, data: { score: 10 + i } })
    given.push(await version())
    if (i === 1) await foldScreenStats(prisma)
  }
  // The restored state (versions as in the backup, no delta since), then one write: a
  // version never given out.
  await prisma.$executeRaw`DELETE FROM screen_summary_deltas WHERE job_id = ${job.id}::uuid`
  for (const { slot, version, changes, hash } of backup) await prisma.$executeRaw`UPDATE job_screen_stats SET version = ${version}, changes = ${changes}, changes_hash = ${hash} WHERE job_id = ${job.id}::uuid AND slot = ${slot}`
  t.equal(await version(), given[0], 'the backup\'s own version, with the backup\'s figures')
  await prisma.screen.updateMany({ where: { jobId: job.id, status: 'completed', score: { not: null } }, data: { score: 42 } })
  t.notOk(given.includes(await version()), 'the next write\'s version was never given out')
})

t.test('TRUNCATE, which fires no row trigger, empties the summaries too', async t => {
  const tenant = await createTenant(prisma)
  const job = await jobWithScreens(tenant)
  await foldScreenStats(prisma)
  const versions = async () => (await prisma.$queryRaw<Array<{ slot: number, version: bigint }>>`SELECT slot, version FROM job_screen_stats WHERE job_id = ${job.id}::uuid ORDER BY slot`)
  const before = await versions()
  await prisma.$executeRawUnsafe('TRUNCATE screens')
  const [row] = await prisma.$queryRaw<Array<{ n: number }>>`SELECT ((SELECT count(*) FROM job_completion_segments) + (SELECT count(*) FROM job_completion_boundaries))::int AS n`
  t.equal(row!.n, 0, 'no completion is left')
  // The per-job rows stay, with zeros: their versions must not start again (an ETag of an
  // earlier state would match a later one).
  const stats = await prisma.$queryRaw<Array<{ zero: boolean }>>`
    SELECT (in_progress, completed, expired, scored, score_sum) = (0, 0, 0, 0, 0) AS zero FROM job_screen_stats WHERE job_id = ${job.id}::uuid`
  t.ok(stats.length > 0 && stats.every(s => s.zero), 'the job\'s figures are zeros')
  const after = await versions()
  t.same(after.map(v => v.slot), before.map(v => v.slot))
  t.ok(after.every((v, i) => v.version > before[i]!.version), 'and every slot\'s version moved on')
  t.same(await onReadJobStats(prisma, job.id), { interviewCount: 0, averageScore: null })
  t.match(await findJob(clientReader(prisma), tenant.organizationId, job.id), { interviewCount: 0, averageScore: null })
})

t.test('completions far from now: before 1980, and windows past 2038 (epochs beyond 32 bits)', async t => {
  const tenant = await createTenant(prisma)
  const job = await createJob(prisma, tenant)
  const started = at('1975-01-01T00:00:00Z')
  await createScreens(prisma, job.id, ['1979-12-30T23:10:00Z', '1979-06-04T03:00:00Z', '2040-01-01T11:00:00Z', '2040-01-02T02:00:00Z', '2040-01-05T00:00:00Z', '2999-12-29T23:45:00Z']
    .map((iso, i) => ({ status: 'completed' as const, score: 10 * i, completedAt: at(iso), startedAt: started })))
  for (const tz of ['UTC', 'Asia/Kathmandu', 'America/Anchorage', 'Pacific/Kiritimati', 'Etc/GMT+12']) {
    t.same(await jobAnalytics(clientReader(prisma), tenant.organizationId, job.id, inZone(tz)), await onReadAnalytics(prisma, job.id, tz), tz)
  }
  const weeks = { first: '2039-12-26', last: '2040-01-09' }
  t.same(await jobAnalytics(clientReader(prisma), tenant.organizationId, job.id, { ...inZone('Asia/Kathmandu'), weeks }), await onReadAnalytics(prisma, job.id, 'Asia/Kathmandu', weeks), 'a range in 2040')
})

t.test('npm run admin -- verify-stats [--fix]: exit 1 on drift, 0 once repaired', { skip: db.url === undefined ? 'the command line needs a server database (TEST_DATABASE_URL): the embedded test database lives in this process' : false }, async t => {
  const tenant = await createTenant(prisma)
  const job = await jobWithScreens(tenant)
  await foldScreenStats(prisma)
  await prisma.$executeRaw`UPDATE job_screen_stats SET completed = completed - 1 WHERE job_id = ${job.id}::uuid`
  const admin = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', 'verify-stats', ...args], { env: { ...process.env, DATABASE_URL: db.url!, LOG_LEVEL: 'silent' }, encoding: 'utf8', timeout: 120_000 })
  const check = admin()
  t.equal(check.status, 1, check.stderr)
  t.match(JSON.parse(check.stdout), { drift: { jobs: 1, jobIds: [job.id] }, repaired: [] })
  t.match(check.stderr, /verify-stats: \d+\/\d+ jobs checked, 1 differ/, 'progress on stderr')
  const fix = admin('--fix')
  t.equal(fix.status, 0, fix.stderr)
  t.match(JSON.parse(fix.stdout), { drift: { jobs: 0, segments: 0, quarters: 0, malformed: 0 }, repaired: [job.id] })
  t.equal(admin().status, 0, 'clean afterwards')

  // Damage a zone's split only: a boundary window's running total, and another window's order.
  const windows = await prisma.$queryRaw<Array<{ job_id: string }>>`
    UPDATE job_completion_boundaries SET completed_through[1] = completed_through[1] + 1
    WHERE job_id = ${job.id}::uuid AND cardinality(quarters) >= 1 RETURNING job_id`
  t.ok(windows.length > 0, 'the job has a boundary window')
  const quarters = admin()
  t.equal(quarters.status, 1, 'a boundary window alone is drift: exit 1')
  t.match(JSON.parse(quarters.stdout), { drift: { jobs: 0, segments: 0, quarters: 2, jobIds: [job.id] } })
  const slow = admin('--timeout', '0.001')
  t.not(slow.status, 0, 'past --timeout it stops and fails')
  t.match(slow.stderr, /ran out of time/)
  t.equal(admin('--fix').status, 0)
  t.equal(admin().status, 0, 'clean again')
})

// The migrations folder as it was before `cut`, applied to a new database, with data
// written; then the rest, as a deployment would run them: before the summaries existed, and
// before the boundary windows replaced quarter-hour rows (the data then kept by the first
// layout's triggers).
for (const cut of [SUMMARIES, BOUNDARIES]) {
  t.test(`the migrations from ${cut} on backfill the summaries of existing screens`, async t => {
    const before = await mkdtemp(join(tmpdir(), 'screening-migrations-'))
    t.teardown(() => rm(before, { recursive: true, force: true }))
    await cp(migrationsDir, before, { recursive: true })
    const names = (await readdir(before)).filter(n => /^\d{14}_/.test(n)).sort()
    t.ok(names.includes(cut))
    for (const name of names.filter(n => n >= cut)) await rm(join(before, name), { recursive: true })

    const pglite = new PGlite()
    t.teardown(() => pglite.close())
    t.same(await applyMigrations(new PrismaPGlite(pglite), before), names.filter(n => n < cut))
    const old = embeddedDatabase(pglite)
    const tenant = await createTenant(old.prisma)
    const jobs = [await createJob(old.prisma, tenant), await createJob(old.prisma, tenant), await createJob(old.prisma, tenant)]
    // Two years of screens, every status, completions at any minute (week boundaries too),
    // scores with up to 17 significant digits; the third job has none.
    await old.prisma.$executeRaw`
      INSERT INTO screens (job_id, status, score, started_at, completed_at)
      SELECT (${jobs.map(j => j.id)}::uuid[])[1 + i % 2], s.status,
             CASE WHEN i % 7 <> 0 THEN (i * 0.6180339887498949) % 100 END,
             timestamptz '2024-01-01 00:00+00',
             CASE WHEN s.status = 'completed' THEN timestamptz '2024-01-01 00:00+00' + (i * 997) % (730 * 1440) * interval '1 minute' END
      FROM generate_series(1, 3000) i
      CROSS JOIN LATERAL (SELECT (ARRAY['completed', 'completed', 'in_progress', 'expired'])[1 + i % 4]::screen_status AS status) s`

    // A role that reads the summaries, as prisma/sql/api-role.sql made it after the earlier
    // migrations: it must be able to read what the later ones add.
    await old.prisma.$executeRawUnsafe('CREATE ROLE summaries_reader')
    await old.prisma.$executeRawUnsafe(`GRANT SELECT ON ${cut === SUMMARIES ? 'screens' : 'job_screen_stats, job_completion_segments'} TO summaries_reader`)

    t.same(await applyMigrations(new PrismaPGlite(pglite)), names.filter(n => n >= cut))
    await storeZoneRules(clientReader(old.prisma), zoneRules())
    if (cut === BOUNDARIES) {
      const [grant] = await old.prisma.$queryRaw<Array<{ ok: boolean }>>`SELECT has_table_privilege('summaries_reader', 'job_completion_boundaries', 'SELECT') AS ok`
      t.ok(grant!.ok, 'a role that could read the segments can read the boundary windows')
    }
    t.same((await verifyScreenStats(old.prisma)).drift, { jobs: 0, segments: 0, quarters: 0, malformed: 0, jobIds: [] })
    for (const job of jobs) {
      const found = await findJob(clientReader(old.prisma), tenant.organizationId, job.id)
      t.same({ interviewCount: found?.interviewCount, averageScore: found?.averageScore }, await onReadJobStats(old.prisma, job.id), `get job ${job.id}`)
      for (const tz of ['UTC', 'Europe/Berlin', 'America/Anchorage', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns', 'Pacific/Kiritimati', 'Etc/GMT+12']) {
        t.same(await jobAnalytics(clientReader(old.prisma), tenant.organizationId, job.id, inZone(tz)), await onReadAnalytics(old.prisma, job.id, tz), `analytics in ${tz}`)
      }
      const weeks = { first: '2024-06-03', last: '2024-09-30' }
      t.same(await jobAnalytics(clientReader(old.prisma), tenant.organizationId, job.id, { ...inZone('Asia/Kathmandu'), weeks }), await onReadAnalytics(old.prisma, job.id, 'Asia/Kathmandu', weeks), 'analytics of a range')
    }
    t.ok((await onReadJobStats(old.prisma, jobs[0]!.id)).interviewCount > 1000, 'the data is there')
  })
}

t.test('rows a reader would misread are malformed whatever their figures add up to, and --fix replaces them', async t => {
  const tenant = await createTenant(prisma)
  const job = await createJob(prisma, tenant)
  await createScreens(prisma, job.id, ['2026-01-04T23:30:00Z', '2026-01-05T00:30:00Z', '2026-01-07T12:00:00Z'].map(iso => ({ status: 'completed' as const, score: 50, completedAt: at(iso), startedAt: at('2026-01-01T00:00:00Z') })))
  await foldScreenStats(prisma)
  const clean = { jobs: 0, segments: 0, quarters: 0, malformed: 0, jobIds: [] }
  const check = async () => (await verifyScreenStats(prisma)).drift
  // A NULL running total: the quarter hours' differences are NULL, so figures alone miss it.
  t.equal(await prisma.$executeRaw`UPDATE job_completion_boundaries SET completed_through[1] = NULL WHERE job_id = ${job.id}::uuid`, 1)
  t.match(await check(), { malformed: 1, jobIds: [job.id] }, 'a NULL element')
  await verifyScreenStats(prisma, { fix: true })
  t.same(await check(), clean, 'repaired')
  await foldScreenStats(prisma)
  t.same(await check(), clean, 'and stays so once folded')
  // A segment row moved off its segment's start, figures unchanged.
  t.equal(await prisma.$executeRaw`UPDATE job_completion_segments SET segment = segment + interval '1 hour' WHERE job_id = ${job.id}::uuid`, 1)
  t.match(await check(), { malformed: 1, jobIds: [job.id] }, 'a segment off its start')
  await verifyScreenStats(prisma, { fix: true })
  await foldScreenStats(prisma)
  t.same(await check(), clean, 'repaired, and folded')
  for (const tz of ['UTC', 'America/Los_Angeles']) t.same(await jobAnalytics(clientReader(prisma), tenant.organizationId, job.id, inZone(tz)), await onReadAnalytics(prisma, job.id, tz), tz)
})

t.test('TRUNCATE counts a job\'s unfolded deltas: its version never goes back', async t => {
  const tenant = await createTenant(prisma)
  const job = await jobWithScreens(tenant)
  const version = async () => (await versionedAnalytics(clientReader(prisma), tenant.organizationId, job.id, inZone('UTC')))!.version
  const before = await version()
  t.equal((await prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM job_screen_stats WHERE job_id = ${job.id}::uuid`)[0]!.n, 0, 'no summary row yet: deltas only')
  await prisma.$executeRawUnsafe('TRUNCATE screens')
  const after = await version()
  t.ok(changesOf(after) > changesOf(before), `${after} after ${before}`)
})
