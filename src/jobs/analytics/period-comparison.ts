import { addDays, weeksOverlapping, type RangeProblem } from './arithmetic.js'
import type { ComparisonWindow } from './comparison-text.js'

// compare=previous_period (docs/decisions.md, "Dashboards: the previous period"): the range
// moved back by as many whole weeks as it spans, so that week i of one is week i of the other.

type Range = { from: string, to: string }

export function comparisonWindow (range: Range, weeks: ComparisonWindow['weeks']): ComparisonWindow {
  const back = -7 * weeksOverlapping(range.from, range.to).length
  return { previous: { from: addDays(range.from, back), to: addDays(range.to, back) }, weeks: { first: addDays(weeks.first, back), last: weeks.last }, splitAt: weeks.first }
}

/** The 400's problem when compare has no range to compare. */
export const compareProblems = (compare: string | undefined, from: string | undefined): RangeProblem[] =>
  compare !== undefined && from === undefined ? [{ path: 'querystring/compare', message: 'needs `from` and `to`: the range to compare with the one before it' }] : []
