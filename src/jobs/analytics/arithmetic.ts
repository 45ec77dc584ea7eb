// Pure arithmetic of the analytics operation: no database, no HTTP. Dates are calendar
// dates as `YYYY-MM-DD` strings; arithmetic on them is done in UTC, where days are 24 h.

import { MAX_RANGE_YEARS } from '../../limits.js'
import type { AnalyticsRows } from './read.js'

const DAY_MS = 86_400_000

export interface WeekBin {
  week: string
  count: number
  average_score: number | null
}

/** round(100 × completed / total), halves rounded up, in integer arithmetic; 0 with no screens. */
export function completionRate (completed: number, total: number): number {
  if (total <= 0) return 0
  return Math.floor((200 * completed + total) / (2 * total))
}

const toDate = (day: string): number => Date.parse(`${day}T00:00:00.000Z`)
const toDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

export function addDays (day: string, days: number): string {
  return toDay(toDate(day) + days * DAY_MS)
}

/** The Monday of the ISO week that contains `day`. */
export function mondayOf (day: string): string {
  const weekday = (new Date(toDate(day)).getUTCDay() + 6) % 7 // Monday 0 … Sunday 6
  return addDays(day, -weekday)
}

/** Every Monday from the week of `from` to the week of `to`, ascending. */
export function weeksOverlapping (from: string, to: string): string[] {
  const weeks: string[] = []
  for (let week = mondayOf(from); week <= to; week = addDays(week, 7)) weeks.push(week)
  return weeks
}

/** The bins of every week of the range, in order: zero where nothing was completed. */
export function zeroFill (bins: WeekBin[], from: string, to: string): WeekBin[] {
  const byWeek = new Map(bins.map(b => [b.week, b]))
  return weeksOverlapping(from, to).map(week => byWeek.get(week) ?? { week, count: 0, average_score: null })
}

export type RangeProblem = { path: string, message: string }

/** Checks a from/to pair (already valid dates); a list of problems, empty when it is fine. */
export function rangeProblems (from: string | undefined, to: string | undefined): RangeProblem[] {
  if (from === undefined && to === undefined) return []
  if (from === undefined) return [{ path: 'querystring/from', message: 'is required when `to` is given' }]
  if (to === undefined) return [{ path: 'querystring/to', message: 'is required when `from` is given' }]
  if (from > to) return [{ path: 'querystring/from', message: 'must not be after `to`' }]
  const [y, m, d] = from.split('-').map(Number) as [number, number, number]
  const limit = toDay(Date.UTC(y + MAX_RANGE_YEARS, m - 1, d))
  if (to > limit) return [{ path: 'querystring/to', message: `must be at most ${MAX_RANGE_YEARS} years after \`from\`` }]
  return []
}

/**
 * The analytics object from the status counts and the weekly bins of the repository: the
 * rate over all screens, zero-fill inside a range.
 */
export function buildAnalytics ({ byStatus, weeks }: AnalyticsRows, range?: { from: string, to: string }) {
  const total = byStatus.completed + byStatus.in_progress + byStatus.expired
  const weekly: WeekBin[] = weeks.map(b => ({ week: b.week, count: b.count, average_score: b.averageScore }))
  return {
    completion_rate: completionRate(byStatus.completed, total),
    average_score_by_week: range === undefined ? weekly : zeroFill(weekly, range.from, range.to),
    interviews_by_status: byStatus,
    total_interviews: total,
  }
}
