import t from 'tap'
import { foldScreenStats, verifyScreenStats } from '../../../src/admin/screen-stats.js'
import { clientReader } from '../../../src/db/sql-reader.js'
import { organizationAnalyticsText, organizationAnalyticsVersion } from '../../../src/jobs/dashboard/read-organization-analytics.js'
import { createTestDatabase } from '../../helpers/database.js'
import { createJob, createScreens, createTenant } from '../../helpers/fixtures.js'
import { inZone } from '../../helpers/zones.js'

// The rollup's version (organization_screen_stats and the organization's unfolded deltas):
// every change to a job's figures moves it on, a fold keeps it, and another organization's
// changes leave it alone. A fold that did not count its deltas in the organization's row would
// bring back the version of the figures before them.

const db = await createTestDatabase()
t.teardown(() => db.close())
const { prisma } = db
const reader = clientReader(prisma)

const home = await createTenant(prisma, { plan: 'pro' })
const away = await createTenant(prisma, { plan: 'pro' })
const job = await createJob(prisma, home)
const awayJob = await createJob(prisma, away)
const completed = (score: number | null) => ({ status: 'completed' as const, score, startedAt: new Date('2026-01-01T00:00:00Z'), completedAt: new Date('2026-01-05T10:00:00Z') })

const version = async (organizationId = home.organizationId): Promise<string> => (await organizationAnalyticsVersion(reader, { organizationId })).version
// A version is ids/changes:time:hash.
const changesOf = (v: string): bigint => BigInt(v.split('/')[1]!.split(':')[0]!)
const timeOf = (v: string): bigint => BigInt(v.split('/')[1]!.split(':')[1]!)
const movedOn = (after: string, before: string): boolean => changesOf(after) > changesOf(before) && timeOf(after) > timeOf(before)

t.test('a write moves the rollup\'s version on and a fold keeps it; the full statement reads the same version', async t => {
  const empty = await version()
  await createScreens(prisma, job.id, [completed(80), completed(null), { status: 'in_progress' }])
  const written = await version()
  t.ok(movedOn(written, empty), `${written} after ${empty}`)
  t.equal((await organizationAnalyticsText(reader, { organizationId: home.organizationId }, inZone('UTC'))).version, written, 'the answer\'s statement reads the version the 304 reads')
  await foldScreenStats(prisma)
  t.equal(await version(), written, 'folded: the same figures, the same version')
  await createScreens(prisma, job.id, [completed(10)])
  const again = await version()
  t.ok(movedOn(again, written), 'a second write after the fold')
  await foldScreenStats(prisma)
  t.equal(await version(), again)
})

t.test('another organization\'s writes and folds leave the version alone', async t => {
  await foldScreenStats(prisma)
  const before = await version()
  const awayBefore = await version(away.organizationId)
  await createScreens(prisma, awayJob.id, [completed(50)])
  t.equal(await version(), before, 'unfolded')
  await foldScreenStats(prisma)
  t.equal(await version(), before, 'folded')
  t.ok(movedOn(await version(away.organizationId), awayBefore), 'while the other\'s moved on')
})

t.test('a new job, a repair, a rebuild and a TRUNCATE move it on', async t => {
  await foldScreenStats(prisma)
  const before = await version()
  const added = await createJob(prisma, home)
  const withJob = await version()
  t.not(withJob, before, 'a job with no screen joins the selection: its ids')
  await prisma.$executeRaw`UPDATE job_screen_stats SET completed = completed + 1 WHERE job_id = ${job.id}::uuid`
  await verifyScreenStats(prisma, { fix: true })
  const repaired = await version()
  t.ok(movedOn(repaired, withJob), `repaired: ${repaired} after ${withJob}`)
  await foldScreenStats(prisma)
  t.equal(await version(), repaired, 'the repair\'s deltas folded')
  await createScreens(prisma, added.id, [completed(70)])
  const unfolded = await version()
  await prisma.$executeRaw`SELECT rebuild_screen_summaries(ARRAY[${added.id}::uuid])`
  const rebuilt = await version()
  t.ok(movedOn(rebuilt, unfolded), `rebuilt with a delta unfolded: ${rebuilt} after ${unfolded}`)
  await createScreens(prisma, job.id, [completed(20)])
  const beforeTruncate = await version()
  await prisma.$executeRawUnsafe('TRUNCATE screens')
  const truncated = await version()
  t.ok(movedOn(truncated, beforeTruncate), `truncated with a delta unfolded: ${truncated} after ${beforeTruncate}`)
  t.match(await organizationAnalyticsText(reader, { organizationId: home.organizationId }, inZone('UTC')), { version: truncated, byStatus: { completed: 0, in_progress: 0, expired: 0 } })
})
