import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import t from 'tap'
import type { ScreenStatus } from '../../../src/generated/prisma/enums.js'
import { JOB_NOT_FOUND_ENTRY } from '../../../src/jobs/dashboard/jobs-analytics-answer.js'
import { zoneRules } from '../../../src/zones/rules.js'
import { buildTestApp, sameDatabaseApp } from '../../helpers/app.js'
import { createJob, createTenant } from '../../helpers/fixtures.js'
import { checkProperty, storableScore } from '../../helpers/property.js'
import { referenceRollup, sameRollup, type ReferenceRollup } from '../../helpers/rollup-reference.js'

// Random organizations' jobs and screens, random writes between calls (screens added, changed,
// deleted and moved, jobs moved to the other organization and deleted), a random zone and
// range, compare=previous_period or not: every entry of a batch equals, byte for byte, what the single-job call answers for
// that job with nothing written between the two; a job that is not the caller's is the one
// not-found entry; a job's comparison equals rollup-reference.ts's of the job alone. ANALYTICS_SCREENS_READ_MAX is 3: a job's bins come from its screens or its
// summaries as it grows.

const env = { ANALYTICS_SCREENS_READ_MAX: '3', RATE_LIMIT_MAX: '1000000' }
const base = await buildTestApp(t, { env })
const { app, prisma } = base
// The single answers to compare with, from an instance that keeps none: the batch's entries
// may be answers the app kept (its single job's or an earlier batch's), never computed twice.
const computed = await sameDatabaseApp(t, base, { ...env, ANALYTICS_CACHE_BYTES: '0' })
const home = await createTenant(prisma, { plan: 'pro' })
const away = await createTenant(prisma, { plan: 'pro' })
const zones = zoneRules().names()
const jobs: string[] = []
for (let i = 0; i < 6; i++) jobs.push((await createJob(prisma, i < 5 ? home : away)).id)

const MIN = Date.parse('2025-01-01T00:00:00Z')
const MAX = Date.parse('2026-12-31T00:00:00Z')
const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

const write = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('insert' as const), job: fc.nat(5), n: fc.integer({ min: 1, max: 4 }), status: fc.constantFrom<ScreenStatus>('completed', 'completed', 'in_progress', 'expired'), score: fc.option(storableScore, { nil: null }), at: fc.integer({ min: MIN, max: MAX }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('complete' as const, 'delete' as const, 'move' as const), job: fc.nat(5), other: fc.nat(5), score: fc.option(storableScore, { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('moveJob' as const, 'replaceJob' as const), job: fc.nat(5) }) }
)
type Write = typeof write extends fc.Arbitrary<infer W> ? W : never

async function apply (w: Write): Promise<void> {
  const job = jobs[w.job]!
  if (w.kind === 'insert') {
    await prisma.screen.createMany({ data: Array.from({ length: w.n }, (_, i) => ({ jobId: job, status: w.status, score: w.score, startedAt: new Date(MIN - 86_400_000), completedAt: w.status === 'completed' ? new Date(w.at + i * 3_600_000) : null })) })
  } else if (w.kind === 'complete') {
    await prisma.$executeRaw`UPDATE screens SET status = 'completed', score = ${w.score}, completed_at = coalesce(completed_at, started_at + interval '400 days') WHERE id = (SELECT id FROM screens WHERE job_id = ${job}::uuid ORDER BY id DESC LIMIT 1)`
  } else if (w.kind === 'delete') {
    await prisma.$executeRaw`DELETE FROM screens WHERE id = (SELECT id FROM screens WHERE job_id = ${job}::uuid ORDER BY id LIMIT 1)`
  } else if (w.kind === 'move') {
    await prisma.$executeRaw`UPDATE screens SET job_id = ${jobs[w.other]!}::uuid WHERE id = (SELECT id FROM screens WHERE job_id = ${job}::uuid ORDER BY id LIMIT 1)`
  } else if (w.kind === 'moveJob') {
    const row = await prisma.job.findUnique({ where: { id: job } })
    const to = row?.organizationId === home.organizationId ? away : home
    if (row !== null) await prisma.job.update({ where: { id: job }, data: { organizationId: to.organizationId, userId: to.userId } })
  } else {
    // The job deleted with its screens, and a new one in its place.
    await prisma.job.delete({ where: { id: job } }).catch(() => {})
    jobs[w.job] = (await createJob(prisma, w.job === 5 ? away : home)).id
  }
}

const arb = fc.record({
  writes: fc.array(write, { maxLength: 6 }),
  asked: fc.array(fc.oneof({ weight: 6, arbitrary: fc.nat(5) }, { weight: 1, arbitrary: fc.constant(-1) }), { minLength: 1, maxLength: 10 }),
  tz: fc.option(fc.constantFrom(...zones), { nil: undefined, freq: 3 }),
  range: fc.option(fc.tuple(fc.integer({ min: MIN, max: MAX }), fc.integer({ min: 0, max: 200 })).map(([start, days]) => ({ from: day(start), to: day(start + days * 86_400_000) })), { nil: undefined }),
  compare: fc.boolean(),
})

const STANDING = ['tz=Europe/Berlin', 'tz=America/New_York&from=2025-06-02&to=2025-09-28&compare=previous_period']
const lastEtags = new Map<string, string>()
let standing = 0
let unchanged = 0
let entries = 0
let compared = 0
let notFound = 0
let fromSummaries = 0
t.test('every entry of a batch is the single-job answer of the same state', async t => {
  await checkProperty(t, 'jobs analytics batch', arb, async ({ writes, asked, tz, range, compare }) => {
    for (const w of writes) await apply(w)
    const ids = asked.map(i => i === -1 ? randomUUID() : jobs[i]!)
    const comparing = compare && range !== undefined
    const query = new URLSearchParams({ ...(tz !== undefined ? { tz } : {}), ...(range ?? {}), ...(comparing ? { compare: 'previous_period' } : {}) }).toString()
    const url = `/api/analytics/jobs?${[...ids.map(id => `job_id=${id}`), query].filter(p => p !== '').join('&')}`
    const res = await app.inject({ url, headers: home.auth })
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
    const parts: string[] = []
    for (const id of [...new Set(ids)]) {
      const one = await computed.inject({ url: `/api/jobs/${id}/analytics${query === '' ? '' : `?${query}`}`, headers: home.auth })
      if (one.statusCode === 200) {
        parts.push(`{"job_id":"${id}","analytics":${one.body}}`)
        if ((one.json() as { interviews_by_status: { completed: number } }).interviews_by_status.completed > 3) fromSummaries++
        if (comparing) {
          // The job's figures and its comparison, against the JavaScript computation from its rows.
          const reference = await referenceRollup(prisma, home.organizationId, { ...(tz !== undefined ? { tz } : {}), range: range!, jobIds: [id], compare: true })
          const { job_count: _, average_score: __, ...want } = reference
          if (!sameRollup(one.json() as ReferenceRollup, want as ReferenceRollup)) throw new Error(`${id} ${query}:\n got ${one.body}\nwant ${JSON.stringify(want)}`)
          // The range's own figures, byte for byte those of the call without compare.
          const plain = await computed.inject({ url: `/api/jobs/${id}/analytics?${query.replace('&compare=previous_period', '')}`, headers: home.auth })
          if (!one.body.startsWith(`${plain.body.slice(0, -1)},"period":`)) throw new Error(`${id} ${query}: not the answer without compare:\n${one.body}\n${plain.body}`)
          compared++
        }
      } else if (one.statusCode === 404) { parts.push(`{"job_id":"${id}","error":${JSON.stringify(JOB_NOT_FOUND_ENTRY)}}`); notFound++ } else throw new Error(`${id}: ${one.statusCode} ${one.body}`)
      entries++
    }
    const want = `{"jobs":[${parts.join(',')}]}`
    if (res.body !== want) throw new Error(`${url}:\n got ${res.body}\nwant ${want}`)
    // The same questions every case, so that the answers kept from the last case (whose jobs
    // the writes may or may not have touched) are given again or not: never a stale one.
    for (const fixed of STANDING) {
      const all = `/api/analytics/jobs?${[...jobs.map(id => `job_id=${id}`), fixed].join('&')}`
      const [kept, fresh] = await Promise.all([app, computed].map(async instance => await instance.inject({ url: all, headers: home.auth })))
      if (kept!.body !== fresh!.body) throw new Error(`${all}: an answer kept is not the one computed:\n got ${kept!.body}\nwant ${fresh!.body}`)
      const singles = await Promise.all(jobs.map(async id => await app.inject({ url: `/api/jobs/${id}/analytics?${fixed}`, headers: home.auth })))
      for (const [i, one] of singles.entries()) {
        if (one.statusCode !== 200) continue
        if (!kept!.body.includes(`{"job_id":"${jobs[i]}","analytics":${one.body}}`)) throw new Error(`${jobs[i]} ${fixed}: the single answer kept is not the batch's entry`)
        const etag = `${fixed}|${jobs[i]}`
        if (lastEtags.get(etag) === one.headers.etag) unchanged++
        lastEtags.set(etag, one.headers.etag as string)
        standing++
      }
    }
  }, 100)
  t.comment(`property figures: jobs analytics batch: ${entries} entries compared (${notFound} not the caller's, ${compared} beside their previous period and equal to the reference's, ${fromSummaries} with their bins from the summaries); standing questions: ${standing} entries equal to the computed answers and to the single answers kept, ${unchanged} of them of a job unchanged since the case before`)
})
