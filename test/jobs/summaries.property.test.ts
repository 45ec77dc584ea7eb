import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import t from 'tap'
import { foldScreenStats, verifyScreenStats } from '../../src/admin/screen-stats.js'
import { buildAnalytics, mondayOf } from '../../src/jobs/analytics/arithmetic.js'
import type { ScreenStatus } from '../../src/generated/prisma/enums.js'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { onReadAnalytics, onReadJobStats } from '../helpers/on-read.js'
import { checkProperty, storableScore } from '../helpers/property.js'
import { zoneRules } from '../../src/zones/rules.js'

// The summaries that triggers keep (issue 13) against the screens themselves: random jobs
// and screens, then random writes (inserts, status, score and completion-time changes,
// moves between jobs, deletes of screens and of a whole job), some batches in concurrent
// transactions. Afterwards every job's get-job and analytics bodies (random zones, random
// ranges) must equal what the on-read computation over the raw screens gives, exactly:
// both sides average exact numeric sums. On the embedded database (one connection) the
// "concurrent" transactions run one after the other; on a server they overlap.

// Analytics from the summaries whatever the job's size (small jobs are otherwise read from
// their screens): the summaries are what is tested here.
const { app, prisma, db } = await buildTestApp(t, { env: { RATE_LIMIT_MAX: '1000000', ANALYTICS_SCREENS_READ_MAX: '0' } })
const concurrent = db.apiUrl !== undefined
const me = await createTenant(prisma)
const zones = zoneRules().names()
const MIN = Date.parse('1975-01-01T00:00:00Z')
// Past 2038 too, where epochs in seconds no longer fit 32 bits.
const MAX = Date.parse('2060-12-31T00:00:00Z')
const STARTED = new Date(MIN - 86_400_000)
const STATUSES: ScreenStatus[] = ['completed', 'completed', 'in_progress', 'expired']

// Completions anywhere, or near a week boundary (Sunday 08:00 to Monday 14:00 UTC), around
// the boundary windows (running totals by quarter hour) and where they meet the segments.
const instant = fc.oneof(
  fc.integer({ min: MIN, max: MAX }),
  fc.tuple(fc.integer({ min: 0, max: 4500 }), fc.integer({ min: -16 * 3_600_000, max: 14 * 3_600_000 }))
    .map(([week, offset]) => Date.parse('1975-01-06T00:00:00Z') + week * 7 * 86_400_000 + offset)
)
// Scores with few and with many digits, and the bounds.
const score = fc.option(fc.oneof(storableScore, fc.integer({ min: 0, max: 1000 }).map(n => n / 10), fc.constantFrom(0, 100)), { nil: null, freq: 4 })
const screen = fc.record({ status: fc.constantFrom(...STATUSES), score, completedAt: instant })

const op = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), job: fc.nat(), screen }),
  fc.record({ kind: fc.constant('status' as const), pick: fc.nat(), status: fc.constantFrom(...STATUSES), completedAt: instant }),
  fc.record({ kind: fc.constant('score' as const), pick: fc.nat(), score }),
  fc.record({ kind: fc.constant('completedAt' as const), pick: fc.nat(), completedAt: instant }),
  fc.record({ kind: fc.constant('move' as const), pick: fc.nat(), job: fc.nat() }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() })
)
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never

const arb = fc.record({
  jobs: fc.array(fc.array(screen, { maxLength: 25 }), { minLength: 1, maxLength: 3 }),
  // Each batch is one transaction; the batches of a step run concurrently.
  steps: fc.array(fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }), { maxLength: 4 }),
  deleteAJob: fc.boolean(),
  // Before which step (the last: after them all) the deltas are folded, besides the instance's
  // own fold each second: the answers read the folded summaries (segments, boundary windows)
  // and the deltas appended after them, not only what a fold happened to reach.
  foldBefore: fc.option(fc.nat({ max: 4 }), { nil: undefined }),
  views: fc.array(fc.record({
    tz: fc.constantFrom(...zones),
    range: fc.option(fc.tuple(fc.integer({ min: MIN, max: MAX }), fc.integer({ min: 0, max: 400 }))
      .map(([start, days]) => ({ from: day(start), to: day(start + days * 86_400_000) })), { nil: undefined }),
  }), { minLength: 1, maxLength: 3 }),
})

function day (ms: number): string { return new Date(ms).toISOString().slice(0, 10) }

type Tx = Parameters<Parameters<typeof prisma.$transaction>[0]>[0]

async function apply (tx: Tx, o: Op, jobIds: string[]): Promise<void> {
  const ids = (await tx.$queryRaw<Array<{ id: string }>>`SELECT id FROM screens WHERE job_id = ANY (${jobIds}::uuid[]) ORDER BY id`).map(r => r.id)
  const target = ids.length === 0 ? undefined : ids[('pick' in o ? o.pick : 0) % ids.length]!
  switch (o.kind) {
    case 'insert':
      await tx.screen.create({ data: { jobId: jobIds[o.job % jobIds.length]!, status: o.screen.status, score: o.screen.score, startedAt: STARTED, completedAt: o.screen.status === 'completed' ? new Date(o.screen.completedAt) : null } })
      return
    case 'status':
      // A completed screen needs a completion time; one that leaves completed keeps its own.
      if (target !== undefined) await tx.$executeRaw`UPDATE screens SET status = ${o.status}::screen_status, completed_at = coalesce(completed_at, ${new Date(o.completedAt)}) WHERE id = ${target}::uuid`
      return
    case 'score':
      if (target !== undefined) await tx.screen.updateMany({ where: { id: target }, data: { score: o.score } })
      return
    case 'completedAt':
      if (target !== undefined) await tx.$executeRaw`UPDATE screens SET completed_at = ${new Date(o.completedAt)} WHERE id = ${target}::uuid AND status = 'completed'`
      return
    case 'move':
      if (target !== undefined) await tx.screen.updateMany({ where: { id: target }, data: { jobId: jobIds[o.job % jobIds.length]! } })
      return
    case 'delete':
      if (target !== undefined) await tx.screen.deleteMany({ where: { id: target } })
  }
}

/** A transaction that lost a deadlock or a serialization race changed nothing: fine here. */
const lostARace = (error: unknown): boolean => /40P01|40001|deadlock/i.test(String((error as Error)?.message) + JSON.stringify(error))

t.test('summaries equal the on-read computation after random writes', async t => {
  let batches = 0
  let aborted = 0
  await checkProperty(t, 'summaries', arb, async ({ jobs: initial, steps, deleteAJob, foldBefore, views }) => {
    const jobIds: string[] = []
    for (const screens of initial) {
      const job = await createJob(prisma, me)
      jobIds.push(job.id)
      await prisma.screen.createMany({ data: screens.map(s => ({ jobId: job.id, status: s.status, score: s.score, startedAt: STARTED, completedAt: s.status === 'completed' ? new Date(s.completedAt) : null })) })
    }
    // Each job's analytics (first view) and ETag before the writes: afterwards, that ETag may
    // only get a 304 if the answer is still the same (the version never stays behind).
    const analyticsUrl = (jobId: string): string => `/api/jobs/${jobId}/analytics?${new URLSearchParams({ tz: views[0]!.tz, ...(views[0]!.range ?? {}) }).toString()}`
    const earlier = new Map<string, { etag: string, body: string }>()
    for (const jobId of jobIds) {
      const res = await app.inject({ url: analyticsUrl(jobId), headers: me.auth })
      earlier.set(jobId, { etag: res.headers.etag as string, body: res.body })
    }
    const run = async (ops: Op[]): Promise<void> => {
      batches++
      try {
        await prisma.$transaction(async tx => { for (const o of ops) await apply(tx, o, jobIds) }, { timeout: 30_000 })
      } catch (error) {
        if (!lostARace(error)) throw error
        aborted++
      }
    }
    const fold = async (): Promise<void> => { await foldScreenStats(prisma) }
    for (const [i, step] of steps.entries()) {
      if (foldBefore === i) await fold()
      if (concurrent) await Promise.all(step.map(run))
      else for (const ops of step) await run(ops)
    }
    if (foldBefore !== undefined && foldBefore >= steps.length) await fold()
    if (deleteAJob && jobIds.length > 1) {
      const gone = jobIds.pop()!
      await prisma.job.delete({ where: { id: gone } })
      const left = await prisma.$queryRaw<Array<{ n: number }>>`SELECT ((SELECT count(*) FROM job_screen_stats WHERE job_id = ${gone}::uuid) + (SELECT count(*) FROM job_completion_segments WHERE job_id = ${gone}::uuid)
        + (SELECT count(*) FROM job_completion_boundaries WHERE job_id = ${gone}::uuid))::int AS n`
      if (left[0]!.n !== 0) throw new Error(`a deleted job left ${left[0]!.n} summary rows`)
    }

    for (const jobId of jobIds) {
      const res = await app.inject({ url: `/api/jobs/${jobId}`, headers: me.auth })
      if (res.statusCode !== 200) throw new Error(`get job: ${res.statusCode} ${res.body}`)
      const { interview_count: interviewCount, average_score: averageScore } = res.json()
      const want = await onReadJobStats(prisma, jobId)
      if (interviewCount !== want.interviewCount || averageScore !== want.averageScore) {
        throw new Error(`get job ${jobId}: ${JSON.stringify({ interviewCount, averageScore })} != ${JSON.stringify(want)}`)
      }
      for (const { tz, range } of views) {
        const query = new URLSearchParams({ tz, ...(range ?? {}) }).toString()
        const res = await app.inject({ url: `/api/jobs/${jobId}/analytics?${query}`, headers: me.auth })
        if (res.statusCode !== 200) throw new Error(`analytics ${query}: ${res.statusCode} ${res.body}`)
        const rows = await onReadAnalytics(prisma, jobId, tz, range === undefined ? undefined : { first: mondayOf(range.from), last: mondayOf(range.to) })
        const want = buildAnalytics(rows, range)
        if (!isDeepStrictEqual(res.json(), want)) throw new Error(`analytics ${query}:\n  got  ${res.body}\n  want ${JSON.stringify(want)}`)
      }
      const before = earlier.get(jobId)!
      const now = await app.inject({ url: analyticsUrl(jobId), headers: { ...me.auth, 'if-none-match': before.etag } })
      if (now.statusCode === 304) {
        const current = await app.inject({ url: analyticsUrl(jobId), headers: me.auth })
        if (current.body !== before.body) throw new Error(`a stale 304: the ETag of before the writes still matches, but the answer changed:\n  before ${before.body}\n  now    ${current.body}`)
      } else if (now.statusCode !== 200) throw new Error(`analytics with If-None-Match: ${now.statusCode} ${now.body}`)
    }
  })
  t.comment(`${batches} write transactions, ${aborted} of them aborted by a deadlock (${concurrent ? 'server: batches overlapped' : 'embedded: batches ran in turn'})`)

  // Every job of every case, in every segment: which covers all zones at once.
  const { drift } = await verifyScreenStats(prisma)
  t.same(drift, { jobs: 0, segments: 0, quarters: 0, malformed: 0, jobIds: [] }, 'verify-stats finds no drift after all the cases')
})
