import fc from 'fast-check'
import t from 'tap'
import type { ScreenStatus } from '../../src/generated/prisma/enums.js'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { checkProperty, closeEnough, storableScore } from '../helpers/property.js'
import { zoneRules } from '../../src/zones/rules.js'
import { zoneReference } from '../helpers/zone-reference.js'

// Random screens over several years, a random IANA zone and a random range: the API must
// equal a reference computed in plain TypeScript, with js-joda over the service's tzdata
// release for local dates (test/helpers/zone-reference.ts).

const { app, prisma } = await buildTestApp(t)
const me = await createTenant(prisma)
const zones = zoneRules().names()
const local = zoneReference()
const MIN = Date.parse('2022-01-01T00:00:00Z')
const MAX = Date.parse('2026-12-31T00:00:00Z')

const arb = fc.record({
  screens: fc.array(fc.record({
    status: fc.constantFrom<ScreenStatus>('completed', 'completed', 'in_progress', 'expired'),
    score: fc.option(storableScore, { nil: null, freq: 3 }),
    // Most completions near week boundaries (Sunday evening to Monday morning UTC), where bugs live.
    completedAt: fc.oneof(
      fc.integer({ min: MIN, max: MAX }),
      fc.tuple(fc.integer({ min: 0, max: 260 }), fc.integer({ min: -16 * 3_600_000, max: 16 * 3_600_000 }))
        .map(([week, offset]) => Date.parse('2022-01-03T00:00:00Z') + week * 7 * 86_400_000 + offset)
    ),
  }), { maxLength: 40 }),
  tz: fc.option(fc.constantFrom(...zones), { nil: undefined, freq: 6 }),
  range: fc.option(fc.tuple(fc.integer({ min: MIN, max: MAX }), fc.integer({ min: 0, max: 400 }))
    .map(([start, days]) => ({ from: day(start), to: day(start + days * 86_400_000) })), { nil: undefined }),
})

function day (ms: number): string { return new Date(ms).toISOString().slice(0, 10) }
function monday (d: string): string {
  const ms = Date.parse(`${d}T00:00:00Z`)
  return day(ms - ((new Date(ms).getUTCDay() + 6) % 7) * 86_400_000)
}

function reference (screens: Array<{ status: ScreenStatus, score: number | null, completedAt: number }>, tz: string, range?: { from: string, to: string }) {
  const count = (s: ScreenStatus) => screens.filter(x => x.status === s).length
  const byWeek = new Map<string, { count: number, scores: number[] }>()
  for (const s of screens.filter(x => x.status === 'completed')) {
    const week = local.mondayOf(s.completedAt, tz)
    const bin = byWeek.get(week) ?? { count: 0, scores: [] }
    bin.count++
    if (s.score !== null) bin.scores.push(s.score)
    byWeek.set(week, bin)
  }
  let weeks = [...byWeek.keys()].sort()
  if (range !== undefined) {
    // Every week that has a day inside the range, found day by day.
    const inRange = new Set<string>()
    for (let d = range.from; d <= range.to; d = day(Date.parse(`${d}T00:00:00Z`) + 86_400_000)) inRange.add(monday(d))
    weeks = [...inRange].sort()
  }
  const total = screens.length
  return {
    completion_rate: total === 0 ? 0 : Math.round((100 * count('completed')) / total),
    average_score_by_week: weeks.map(week => {
      const bin = byWeek.get(week) ?? { count: 0, scores: [] }
      return { week, average_score: bin.scores.length === 0 ? null : bin.scores.reduce((a, b) => a + b, 0) / bin.scores.length, count: bin.count }
    }),
    interviews_by_status: { completed: count('completed'), in_progress: count('in_progress'), expired: count('expired') },
    total_interviews: total,
  }
}

t.test('analytics agree with a plain computation over random screens, zones and ranges', async t => {
  await checkProperty(t, 'analytics', arb, async ({ screens, tz, range }) => {
    const job = await createJob(prisma, me)
    await prisma.screen.createMany({
      data: screens.map(s => ({ jobId: job.id, status: s.status, score: s.score, startedAt: new Date(MIN - 86_400_000), completedAt: s.status === 'completed' ? new Date(s.completedAt) : null })),
    })
    const query = new URLSearchParams({ ...(tz !== undefined ? { tz } : {}), ...(range ?? {}) }).toString()
    const res = await app.inject({ url: `/api/jobs/${job.id}/analytics${query === '' ? '' : `?${query}`}`, headers: me.auth })
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    const got = res.json()
    const want = reference(screens, tz ?? 'UTC', range)
    const { average_score_by_week: gotBins, ...gotRest } = got
    const { average_score_by_week: wantBins, ...wantRest } = want
    if (JSON.stringify(gotRest) !== JSON.stringify(wantRest)) throw new Error(`${query}: ${JSON.stringify(gotRest)} != ${JSON.stringify(wantRest)}`)
    const shape = (bins: Array<{ week: string, count: number }>) => JSON.stringify(bins.map(b => [b.week, b.count]))
    if (shape(gotBins) !== shape(wantBins)) throw new Error(`${query}: bins ${shape(gotBins)} != ${shape(wantBins)}`)
    gotBins.forEach((b: { average_score: number | null }, i: number) => {
      if (!closeEnough(b.average_score, wantBins[i]!.average_score)) throw new Error(`${query}: average ${b.average_score} != ${wantBins[i]!.average_score}`)
    })
  })
})
