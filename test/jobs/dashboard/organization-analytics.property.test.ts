import fc from 'fast-check'
import t from 'tap'
import type { JobStatus, ScreenStatus } from '../../../src/generated/prisma/enums.js'
import { JOB_STATUSES } from '../../../src/schemas/job.js'
import { zoneRules } from '../../../src/zones/rules.js'
import { createUser } from '../../../src/admin/commands.js'
import { buildTestApp } from '../../helpers/app.js'
import { createJob, createTenant, type Tenant } from '../../helpers/fixtures.js'
import { checkProperty, storableScore } from '../../helpers/property.js'
import { referenceRollup, sameRollup, type ReferenceRollup } from '../../helpers/rollup-reference.js'

// Random jobs of two organizations (two recruiters in one), screens in random states and
// zones, random writes between calls (screens added, completed, deleted and moved between
// jobs, jobs changing state or organization), random filters, zone and range: every rollup
// equals the computation of tests/helpers/rollup-reference.ts from the raw rows, and never
// counts the other organization's screens. ANALYTICS_SCREENS_READ_MAX is 3: a job's weeks
// come from its screens or its summaries as it grows, both in one rollup.

const { app, prisma } = await buildTestApp(t, { env: { ANALYTICS_SCREENS_READ_MAX: '3', RATE_LIMIT_MAX: '1000000' } })
const home = await createTenant(prisma, { plan: 'pro' })
const away = await createTenant(prisma, { plan: 'pro' })
const second = await createUser(prisma, { organizationId: home.organizationId, email: `second-${home.organizationId}@example.test`, name: 'Second' })
const recruiter: Tenant = { ...home, userId: second.id }
const zones = zoneRules().names()
const jobs: string[] = []
for (let i = 0; i < 7; i++) jobs.push((await createJob(prisma, i < 3 ? home : i < 5 ? recruiter : away, { status: JOB_STATUSES[i % 4]! })).id)

const MIN = Date.parse('2025-01-01T00:00:00Z')
const MAX = Date.parse('2026-12-31T00:00:00Z')
const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

const write = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('insert' as const), job: fc.nat(6), n: fc.integer({ min: 1, max: 5 }), status: fc.constantFrom<ScreenStatus>('completed', 'completed', 'in_progress', 'expired'), score: fc.option(storableScore, { nil: null }), at: fc.integer({ min: MIN, max: MAX }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('complete' as const, 'delete' as const, 'move' as const), job: fc.nat(6), other: fc.nat(6), score: fc.option(storableScore, { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('status' as const, 'moveJob' as const), job: fc.nat(6), status: fc.constantFrom<JobStatus>(...JOB_STATUSES) }) }
)
type Write = typeof write extends fc.Arbitrary<infer W> ? W : never

async function apply (w: Write): Promise<void> {
  const job = jobs[w.job]!
  if (w.kind === 'insert') {
    await prisma.screen.createMany({ data: Array.from({ length: w.n }, (_, i) => ({ jobId: job, status: w.status, score: w.status === 'in_progress' ? null : w.score, startedAt: new Date(MIN - 86_400_000), completedAt: w.status === 'completed' ? new Date(w.at + i * 5_400_000) : null })) })
  } else if (w.kind === 'complete') {
    await prisma.$executeRaw`UPDATE screens SET status = 'completed', score = ${w.score}, completed_at = coalesce(completed_at, started_at + interval '400 days') WHERE id = (SELECT id FROM screens WHERE job_id = ${job}::uuid ORDER BY id DESC LIMIT 1)`
  } else if (w.kind === 'delete') {
    await prisma.$executeRaw`DELETE FROM screens WHERE id = (SELECT id FROM screens WHERE job_id = ${job}::uuid ORDER BY id LIMIT 1)`
  } else if (w.kind === 'move') {
    await prisma.$executeRaw`UPDATE screens SET job_id = ${jobs[w.other]!}::uuid WHERE id = (SELECT id FROM screens WHERE job_id = ${job}::uuid ORDER BY id LIMIT 1)`
  } else if (w.kind === 'status') {
    await prisma.job.update({ where: { id: job }, data: { status: w.status } })
  } else {
    const row = await prisma.job.findUniqueOrThrow({ where: { id: job } })
    const to = row.organizationId === home.organizationId ? away : home
    await prisma.job.update({ where: { id: job }, data: { organizationId: to.organizationId, userId: to.userId } })
  }
}

const arb = fc.record({
  writes: fc.array(write, { maxLength: 6 }),
  statuses: fc.option(fc.subarray([...JOB_STATUSES], { minLength: 1 }), { nil: undefined, freq: 3 }),
  user: fc.option(fc.constantFrom('home', 'recruiter', 'away'), { nil: undefined, freq: 3 }),
  tz: fc.option(fc.constantFrom(...zones), { nil: undefined, freq: 3 }),
  range: fc.option(fc.tuple(fc.integer({ min: MIN, max: MAX }), fc.integer({ min: 0, max: 200 })).map(([start, days]) => ({ from: day(start), to: day(start + days * 86_400_000) })), { nil: undefined }),
  compare: fc.boolean(),
})

const STANDING = [
  { query: 'tz=Europe/Berlin', reference: { tz: 'Europe/Berlin' } },
  { query: `tz=America/New_York&from=2025-06-02&to=2025-09-28&compare=previous_period&user_id=${recruiter.userId}`, reference: { tz: 'America/New_York', range: { from: '2025-06-02', to: '2025-09-28' }, userId: recruiter.userId, compare: true } },
]
const lastEtags = new Map<string, string>()
const figures = { standing: 0, unchanged: 0, compared: 0, previousWeeks: 0, rollups: 0, screens: 0, awayScreens: 0, weeks: 0, filtered: 0, fromSummaries: 0 }
t.test('every rollup equals the computation from the raw rows', async t => {
  await checkProperty(t, 'organization rollup', arb, async ({ writes, statuses, user, tz, range, compare }) => {
    for (const w of writes) await apply(w)
    const userId = user === undefined ? undefined : user === 'home' ? home.userId : user === 'recruiter' ? recruiter.userId : away.userId
    const compared = compare && range !== undefined
    const params = new URLSearchParams({ ...(tz !== undefined ? { tz } : {}), ...(range ?? {}), ...(compared ? { compare: 'previous_period' } : {}), ...(userId !== undefined ? { user_id: userId } : {}) })
    for (const status of statuses ?? []) params.append('job_status', status)
    const url = `/api/analytics/organization?${params.toString()}`
    const res = await app.inject({ url, headers: home.auth })
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
    const want = await referenceRollup(prisma, home.organizationId, { ...(tz !== undefined ? { tz } : {}), ...(range !== undefined ? { range } : {}), ...(statuses !== undefined ? { statuses } : {}), ...(userId !== undefined ? { userId } : {}), compare: compared })
    const got = res.json() as ReferenceRollup
    if (!sameRollup(got, want)) throw new Error(`${url}:\n got ${res.body}\nwant ${JSON.stringify(want)}`)
    figures.rollups++
    if (compared) { figures.compared++; figures.previousWeeks += got.previous!.average_score_by_week.length }
    figures.screens += got.total_interviews
    figures.weeks += got.average_score_by_week.length
    if (statuses !== undefined || userId !== undefined) figures.filtered++
    // Jobs of the organization whose weeks the rollup read from their summaries (above 3 completions).
    const large = await prisma.screen.groupBy({ by: ['jobId'], where: { status: 'completed', job: { organizationId: home.organizationId } }, _count: true })
    figures.fromSummaries += large.filter(g => g._count > 3).length
    figures.awayScreens += await prisma.screen.count({ where: { job: { organizationId: away.organizationId } } })
    // The same questions every case: the answer kept from the case before is given again only
    // while no write touched the selection, and always equals the reference.
    for (const standing of STANDING) {
      const again = await app.inject({ url: `/api/analytics/organization?${standing.query}`, headers: home.auth })
      const reference = await referenceRollup(prisma, home.organizationId, standing.reference)
      if (!sameRollup(again.json() as ReferenceRollup, reference)) throw new Error(`${standing.query}: a stale answer:\n got ${again.body}\nwant ${JSON.stringify(reference)}`)
      if (lastEtags.get(standing.query) === again.headers.etag) figures.unchanged++
      lastEtags.set(standing.query, again.headers.etag as string)
      figures.standing++
    }
  }, 100)
  t.comment(`property figures: organization rollup: ${figures.rollups} rollups (${figures.filtered} filtered, ${figures.compared} compared with their previous period, ${figures.previousWeeks} previous weeks), ${figures.screens} screens counted, ${figures.weeks} weekly bins, ${figures.fromSummaries} jobs' weeks from their summaries; the other organization held ${figures.awayScreens} screens over the calls, never counted; standing questions: ${figures.standing} rollups equal to the reference, ${figures.unchanged} of them of an unchanged selection`)
})
