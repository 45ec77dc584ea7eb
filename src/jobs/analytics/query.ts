import type { Static } from '@sinclair/typebox'
import type { AnalyticsQuery } from '../../schemas/analytics.js'
import { readTimeZone, tzProblem } from '../../zones/names.js'
import type { ZoneRules } from '../../zones/rules.js'
import { mondayOf, rangeProblems, type RangeProblem } from './arithmetic.js'
import type { ComparisonWindow } from './comparison-text.js'
import { compareProblems, comparisonWindow } from './period-comparison.js'
import type { WeekRange } from './read.js'

/** What an analytics request asks, read once from its query string. */
export interface AnalyticsAsk {
  /** The zone `tz` stands for in the rules (a link's target). */
  zone: string
  /** The `from`/`to` dates, when given. */
  range: { from: string, to: string } | undefined
  /** The Mondays of the range's first and last weeks, when given. */
  weeks: WeekRange | undefined
  /** compare=previous_period's weeks, when asked (with a range). */
  compare: ComparisonWindow | undefined
}

/**
 * The ask of an analytics query, or the 400's problems: the checks a JSON schema cannot
 * express (a name that is no zone of `rules`, a range backwards or too long).
 */
export function readAnalyticsQuery (query: Static<typeof AnalyticsQuery>, rules: ZoneRules): AnalyticsAsk | { problems: RangeProblem[] } {
  const { tz = 'UTC', from, to, compare } = query
  const reading = readTimeZone(tz, rules)
  const problems = [...('refused' in reading ? [tzProblem(tz, reading.refused)] : []), ...rangeProblems(from, to), ...compareProblems(compare, from)]
  if (problems.length > 0 || !('zone' in reading)) return { problems }
  const range = from !== undefined && to !== undefined ? { from, to } : undefined
  const weeks = range === undefined ? undefined : { first: mondayOf(range.from), last: mondayOf(range.to) }
  return { zone: reading.zone, range, weeks, compare: compare !== undefined && range !== undefined && weeks !== undefined ? comparisonWindow(range, weeks) : undefined }
}

const MAX_INT4 = 2_147_483_647

/**
 * Up to how many completed screens a job's bins in `zone` are read from its screens: the
 * configured number, or every job's in a zone whose rules the summaries cannot answer exactly
 * (none in tzdata 2026f: see zones/rules.ts).
 */
export const screensReadMaxIn = (rules: ZoneRules, zone: string, screensReadMax: number): number =>
  rules.summarizable(zone) ? screensReadMax : MAX_INT4
