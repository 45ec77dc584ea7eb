import type { FastifyRequest } from 'fastify'
import { invalidRequest } from '../../errors.js'
import { addDays, weeksOverlapping } from '../analytics/arithmetic.js'
import { zeroFilledBins } from '../analytics/body.js'
import type { WeekRange } from '../analytics/read.js'
import type { ComparisonText, PeriodText } from './read-organization-analytics.js'

// compare=previous_period (docs/decisions.md, "Dashboards: the previous period"): the range
// moved back by as many whole weeks as it spans, so that week i of one is week i of the other.

type Range = { from: string, to: string }

/** Where a comparison reads: the previous range, the weeks of both, and the Monday between them. */
export interface ComparisonWindow { range: Range, previous: Range, weeks: WeekRange, splitAt: string }

export function comparisonWindow (range: Range, weeks: WeekRange): ComparisonWindow {
  const back = -7 * weeksOverlapping(range.from, range.to).length
  return { range, previous: { from: addDays(range.from, back), to: addDays(range.to, back) }, weeks: { first: addDays(weeks.first, back), last: weeks.last }, splitAt: weeks.first }
}

/** The preHandler's 400: compare needs a range to compare. */
export async function compareNeedsRange (request: FastifyRequest<{ Querystring: { compare?: string, from?: string } }>): Promise<void> {
  if (request.query.compare !== undefined && request.query.from === undefined) {
    throw invalidRequest([{ path: 'querystring/compare', message: 'needs `from` and `to`: the range to compare with the one before it' }])
  }
}

const periodBody = ({ from, to }: Range, { completed, averageScore }: PeriodText): string =>
  `"from":"${from}","to":"${to}","completed":${completed},"average_score":${averageScore ?? 'null'}`

/** The keys compare adds, as JSON text in the schemas' order (schemas/period-comparison.ts), a leading comma included. */
export function comparisonBody ({ period, previous, averageChange }: ComparisonText, window: ComparisonWindow): string {
  return `,"period":{${periodBody(window.range, period)}}` +
    `,"previous":{${periodBody(window.previous, previous)},"average_score_by_week":${zeroFilledBins(previous.bins, window.previous.from, window.previous.to)}}` +
    `,"change":{"completed":${period.completed - previous.completed},"average_score":${averageChange ?? 'null'}}`
}
