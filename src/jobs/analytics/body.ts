import { completionRate, weeksOverlapping } from './arithmetic.js'
import type { ComparisonText, ComparisonWindow, PeriodText } from './comparison-text.js'
import type { AnalyticsText } from './read.js'

/**
 * The analytics answer as JSON text, the object buildAnalytics makes written in its schema's
 * key order (JobAnalyticsSchema, WeekBinSchema), from the statement's bins text (`[["YYYY-MM-DD",count,average],…]`, ascending; see
 * read.ts): each bin's numbers are copied as PostgreSQL wrote them, never parsed and written
 * again. Parsing a 200-screen job's 75 averages and writing them back was about 20 µs of a
 * 250 µs request (bench:profile); this is about 4. test/jobs/analytics-body.unit.test.ts
 * checks it against buildAnalytics.
 */
export function analyticsBody ({ byStatus, bins, comparison }: AnalyticsText, range?: { from: string, to: string }, window?: ComparisonWindow): string {
  const total = byStatus.completed + byStatus.in_progress + byStatus.expired
  const weekly = range === undefined ? binsAsObjects(bins) : zeroFilledBins(bins, range.from, range.to)
  return `{"completion_rate":${completionRate(byStatus.completed, total)},"average_score_by_week":${weekly},` +
    `"interviews_by_status":{"completed":${byStatus.completed},"in_progress":${byStatus.in_progress},"expired":${byStatus.expired}},` +
    `"total_interviews":${total}${comparison !== undefined && range !== undefined && window !== undefined ? comparisonBody(comparison, range, window) : ''}}`
}

const periodBody = ({ from, to }: { from: string, to: string }, { completed, averageScore }: PeriodText): string =>
  `"from":"${from}","to":"${to}","completed":${completed},"average_score":${averageScore ?? 'null'}`

/** The keys compare adds, in the schemas' order (schemas/period-comparison.ts), a leading comma included. */
function comparisonBody ({ period, previous, averageChange }: ComparisonText, range: { from: string, to: string }, window: ComparisonWindow): string {
  return `,"period":{${periodBody(range, period)}}` +
    `,"previous":{${periodBody(window.previous, previous)},"average_score_by_week":${zeroFilledBins(previous.bins, window.previous.from, window.previous.to)}}` +
    `,"change":{"completed":${period.completed - previous.completed},"average_score":${averageChange ?? 'null'}}`
}

/** Each bin of the text: its week, and its count and average as written. */
function * eachBin (bins: string | null): Generator<{ week: string, count: string, average: string }> {
  if (bins === null) return
  // At each bin's `[`: `"` and ten characters of week, `"`, `,`, then the count up to a comma
  // and the average up to `]` (neither an int4 nor float8out ever writes a comma or a bracket).
  for (let at = 1; at < bins.length - 1;) {
    const countEnd = bins.indexOf(',', at + 14)
    const end = bins.indexOf(']', countEnd)
    yield { week: bins.slice(at + 2, at + 12), count: bins.slice(at + 14, countEnd), average: bins.slice(countEnd + 1, end) }
    at = end + 2
  }
}

// In WeekBinSchema's order, as its serializer wrote it (the bench's byte comparison checks it too).
const binObject = (week: string, count: string, average: string): string => `{"week":"${week}","average_score":${average},"count":${count}}`

function binsAsObjects (bins: string | null): string {
  let out = ''
  for (const { week, count, average } of eachBin(bins)) out += (out === '' ? '' : ',') + binObject(week, count, average)
  return `[${out}]`
}

/** Every week of the range, in order: the statement's bins (only the range's), zero where it has none. */
function zeroFilledBins (bins: string | null, from: string, to: string): string {
  const found = eachBin(bins)
  let next = found.next()
  const out: string[] = []
  for (const week of weeksOverlapping(from, to)) {
    if (!next.done && next.value.week === week) {
      out.push(binObject(week, next.value.count, next.value.average))
      next = found.next()
    } else {
      out.push(binObject(week, '0', 'null'))
    }
  }
  return `[${out.join(',')}]`
}
