import type { Prisma } from '../../src/db/database.js'
import { zoneReference } from './zone-reference.js'

// The organization rollup computed in JavaScript from the raw rows, independent of the
// service's SQL: weeks placed by js-joda (zone-reference.ts), sums in exact decimals (each
// score's shortest exact decimal, as PostgreSQL's float8 output writes it), each mean the
// double nearest to the exact quotient.

/** A decimal as an integer times 10^exp. */
interface Decimal { digits: bigint, exp: number }

const decimalOf = (x: number): Decimal => {
  const [mantissa, e = '0'] = String(x).split('e')
  const [whole, fraction = ''] = mantissa!.split('.')
  return { digits: BigInt(whole! + fraction), exp: Number(e) - fraction.length }
}
const add = (a: Decimal, b: Decimal): Decimal => {
  const exp = Math.min(a.exp, b.exp)
  return { digits: a.digits * 10n ** BigInt(a.exp - exp) + b.digits * 10n ** BigInt(b.exp - exp), exp }
}
/** sum / count to 30 significant digits, as the nearest double. */
const mean = (sum: Decimal, count: number): number | null => {
  if (count === 0) return null
  if (sum.digits === 0n) return 0
  const shift = 30 + String(count).length
  return Number(`${(sum.digits * 10n ** BigInt(shift)) / BigInt(count)}e${sum.exp - shift}`)
}
const ZERO: Decimal = { digits: 0n, exp: 0 }

export interface ReferenceRollup {
  job_count: number
  average_score: number | null
  completion_rate: number
  average_score_by_week: Array<{ week: string, average_score: number | null, count: number }>
  interviews_by_status: { completed: number, in_progress: number, expired: number }
  total_interviews: number
  period?: { from: string, to: string, completed: number, average_score: number | null }
  previous?: { from: string, to: string, completed: number, average_score: number | null, average_score_by_week: Array<{ week: string, average_score: number | null, count: number }> }
  change?: { completed: number, average_score: number | null }
}

const mondays = (from: string, to: string, mondayOf: (ms: number) => string): string[] => {
  const out: string[] = []
  for (let d = Date.parse(mondayOf(Date.parse(`${from}T12:00:00Z`)) + 'T00:00:00Z'); d <= Date.parse(`${to}T00:00:00Z`); d += 7 * 86_400_000) out.push(new Date(d).toISOString().slice(0, 10))
  return out
}

/** (a/n - b/m) exactly, as the nearest double: (a·m − b·n) / (n·m). */
const difference = (a: Decimal, n: number, b: Decimal, m: number): number | null => {
  if (n === 0 || m === 0) return null
  return mean(add({ digits: a.digits * BigInt(m), exp: a.exp }, { digits: -b.digits * BigInt(n), exp: b.exp }), n * m)
}

/** The rollup of `organizationId`'s jobs (of `statuses`, of `userId`), as the rows are now; `compare`: with the range's previous period. */
export async function referenceRollup (prisma: Prisma, organizationId: string, options: { tz?: string, range?: { from: string, to: string }, statuses?: string[], userId?: string, jobIds?: string[], compare?: boolean }): Promise<ReferenceRollup> {
  const jobs = (await prisma.job.findMany({ where: { organizationId }, select: { id: true, status: true, userId: true } }))
    .filter(j => (options.statuses === undefined || options.statuses.includes(j.status)) && (options.userId === undefined || j.userId === options.userId) && (options.jobIds === undefined || options.jobIds.includes(j.id)))
  const screens = await prisma.screen.findMany({ where: { jobId: { in: jobs.map(j => j.id) } }, select: { status: true, score: true, completedAt: true } })
  const reference = zoneReference()
  const tz = options.tz ?? 'UTC'
  // The weeks by the local Monday of the instant; a range's Mondays those of its first and last days.
  const mondayOf = (ms: number): string => reference.mondayOf(ms, 'UTC')
  const byStatus = { completed: 0, in_progress: 0, expired: 0 }
  let sum = ZERO
  let scored = 0
  const weeks = new Map<string, { count: number, scored: number, sum: Decimal }>()
  for (const s of screens) {
    byStatus[s.status]++
    if (s.status !== 'completed') continue
    const week = reference.mondayOf(s.completedAt!.getTime(), tz)
    const bin = weeks.get(week) ?? weeks.set(week, { count: 0, scored: 0, sum: ZERO }).get(week)!
    bin.count++
    if (s.score !== null) { bin.scored++; bin.sum = add(bin.sum, decimalOf(s.score)); scored++; sum = add(sum, decimalOf(s.score)) }
  }
  const total = byStatus.completed + byStatus.in_progress + byStatus.expired
  const bin = (week: string) => {
    const b = weeks.get(week)
    return { week, average_score: b === undefined ? null : mean(b.sum, b.scored), count: b?.count ?? 0 }
  }
  const range = options.range
  const binned = range === undefined
    ? [...weeks.keys()].sort().map(bin)
    : mondays(range.from, range.to, mondayOf).map(bin)
  // The previous period: the range moved back by 7 days per week it overlaps, by date arithmetic of its own.
  const shift = (day: string, weeks: number): string => new Date(Date.parse(`${day}T00:00:00Z`) - weeks * 7 * 86_400_000).toISOString().slice(0, 10)
  const totals = (list: string[]) => {
    let total = ZERO
    let n = 0
    let completed = 0
    for (const week of list) { const b = weeks.get(week); if (b !== undefined) { completed += b.count; n += b.scored; total = add(total, b.sum) } }
    return { completed, n, total }
  }
  let comparison = {}
  if (options.compare === true && range !== undefined) {
    const current = mondays(range.from, range.to, mondayOf)
    const previous = { from: shift(range.from, current.length), to: shift(range.to, current.length) }
    const earlier = mondays(previous.from, previous.to, mondayOf)
    const c = totals(current)
    const p = totals(earlier)
    comparison = {
      period: { ...range, completed: c.completed, average_score: mean(c.total, c.n) },
      previous: { ...previous, completed: p.completed, average_score: mean(p.total, p.n), average_score_by_week: earlier.map(bin) },
      change: { completed: c.completed - p.completed, average_score: difference(c.total, c.n, p.total, p.n) },
    }
  }
  return {
    job_count: jobs.length,
    average_score: mean(sum, scored),
    // Halves up, in integers: 100 × completed / total.
    completion_rate: total === 0 ? 0 : Math.floor((200 * byStatus.completed + total) / (2 * total)),
    average_score_by_week: binned,
    interviews_by_status: byStatus,
    total_interviews: total,
    ...comparison,
  }
}

/** Equal, the means to the last bits (PostgreSQL rounds the quotient to at least 16 digits before the double). */
export const sameMean = (a: number | null, b: number | null): boolean => a === b || (a !== null && b !== null && Math.abs(a - b) <= 4 * Number.EPSILON * Math.abs(b))
type Bins = ReferenceRollup['average_score_by_week']
const sameBins = (weeks: Bins, wantWeeks: Bins): boolean => weeks.length === wantWeeks.length &&
  weeks.every((w, i) => w.week === wantWeeks[i]!.week && w.count === wantWeeks[i]!.count && sameMean(w.average_score, wantWeeks[i]!.average_score))
/** The answer's figures but its means equal as JSON; the means within sameMean. */
const sameFigures = (got: Record<string, unknown> | undefined, want: Record<string, unknown> | undefined): boolean => {
  if (got === undefined || want === undefined) return got === want
  const { average_score: a, average_score_by_week: weeks, ...rest } = got as { average_score: number | null, average_score_by_week?: Bins }
  const { average_score: b, average_score_by_week: wantWeeks, ...wantRest } = want as typeof got & { average_score: number | null, average_score_by_week?: Bins }
  return JSON.stringify(rest) === JSON.stringify(wantRest) && sameMean(a, b) && (weeks === undefined ? wantWeeks === undefined : wantWeeks !== undefined && sameBins(weeks, wantWeeks))
}
/** The rollup (or a job's analytics, its figures of the reference's kind) equal to the reference. */
export const sameRollup = (got: ReferenceRollup, want: ReferenceRollup): boolean => {
  const { period, previous, change, ...figures } = got
  const { period: wantPeriod, previous: wantPrevious, change: wantChange, ...wantFigures } = want
  return sameFigures(figures, wantFigures) && sameFigures(period, wantPeriod) && sameFigures(previous, wantPrevious) && sameFigures(change, wantChange)
}
