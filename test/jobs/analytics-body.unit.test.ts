import fc from 'fast-check'
import t from 'tap'
import { addDays, buildAnalytics, mondayOf } from '../../src/jobs/analytics/arithmetic.js'
import { analyticsBody } from '../../src/jobs/analytics/body.js'
import { JobAnalyticsSchema, WeekBinSchema } from '../../src/schemas/analytics.js'
import { AnalyticsPeriodChangeSchema, AnalyticsPeriodSchema, AnalyticsPreviousPeriodSchema, PeriodComparison } from '../../src/schemas/period-comparison.js'
import { comparisonWindow } from '../../src/jobs/analytics/period-comparison.js'
import { checkProperty } from '../helpers/property.js'

// The route's answer is written from the statement's bins text (body.ts): the same object as
// buildAnalytics makes from the parsed bins, in the schema's key order, for any bins,
// averages as float8out writes them (exponents included), and any range.

/** An average as PostgreSQL's float8out writes it: shortest digits, exponents from 1e-05 and 1e+15. */
const float8out = (x: number): string => {
  if (x === 0) return '0'
  const exponent = Math.floor(Math.log10(Math.abs(x)))
  if (exponent >= -4 && exponent < 15) return String(x)
  const [mantissa, power] = x.toExponential().split('e') as [string, string]
  return `${mantissa}e${power.startsWith('-') ? '-' : '+'}${power.replace(/^[-+]/, '').padStart(2, '0')}`
}

const MONDAY = Date.parse('2026-01-05T00:00:00Z')
const bins = fc.uniqueArray(fc.integer({ min: -60, max: 60 }), { maxLength: 30 }).chain(weeks => fc.tuple(
  ...weeks.sort((a, b) => a - b).map(w => fc.tuple(
    fc.constant(new Date(MONDAY + w * 7 * 86_400_000).toISOString().slice(0, 10)),
    fc.integer({ min: 1, max: 2_000_000_000 }),
    fc.option(fc.oneof(fc.double({ min: 0, max: 100, noNaN: true }), fc.constantFrom(1e-5, 3.3e-7, 12.5, 1e15, 2.5e20)), { nil: null })
  ))))
const counts = fc.record({ completed: fc.nat(1_000_000), in_progress: fc.nat(1_000_000), expired: fc.nat(1_000_000) })
const range = fc.option(fc.tuple(fc.integer({ min: -70, max: 70 }), fc.integer({ min: 0, max: 30 }))
  .map(([start, days]) => ({ from: addDays('2026-01-05', start * 3), to: addDays('2026-01-05', start * 3 + days) })), { nil: undefined })

t.test('the written answer is buildAnalytics\' object, in the schema\'s order', async t => {
  await checkProperty(t, 'analyticsBody = buildAnalytics', fc.tuple(bins, counts, range), async ([bins, byStatus, range]) => {
    // The statement gives a range's weeks only.
    const inRange = range === undefined ? bins : bins.filter(([week]) => week >= mondayOf(range.from) && week <= range.to)
    const text = inRange.length === 0 ? null : `[${inRange.map(([week, count, average]) => `["${week}",${count},${average === null ? 'null' : float8out(average)}]`).join(',')}]`
    const weeks = inRange.map(([week, count, averageScore]) => ({ week, count, averageScore }))
    const written = analyticsBody({ byStatus, bins: text, version: '1:2:3' }, range)
    const want = buildAnalytics({ byStatus: { ...byStatus }, weeks }, range)
    t.strictSame(JSON.parse(written), want)
    // The order the schema's serializer wrote, which clients diffing bodies saw.
    const body = JSON.parse(written) as { average_score_by_week: object[], interviews_by_status: object }
    t.same(Object.keys(body), Object.keys(JobAnalyticsSchema.properties).filter(key => !(key in PeriodComparison)), 'the schema\'s keys, the comparison\'s not asked')
    t.same(Object.keys(body.interviews_by_status), Object.keys(JobAnalyticsSchema.properties.interviews_by_status.properties))
    for (const bin of body.average_score_by_week) t.same(Object.keys(bin), Object.keys(WeekBinSchema.properties))
  }, 300)
})

t.test('numbers are copied as written, not rewritten', async t => {
  const written = analyticsBody({ byStatus: { completed: 2, in_progress: 0, expired: 0 }, bins: '[["2026-01-05",1,1e-05],["2026-01-12",1,33.333333333333336]]', version: 'v' })
  t.equal(written, '{"completion_rate":100,"average_score_by_week":[{"week":"2026-01-05","average_score":1e-05,"count":1},{"week":"2026-01-12","average_score":33.333333333333336,"count":1}],"interviews_by_status":{"completed":2,"in_progress":0,"expired":0},"total_interviews":2}')
  t.equal(analyticsBody({ byStatus: { completed: 0, in_progress: 1, expired: 0 }, bins: null, version: 'v' }, { from: '2026-01-07', to: '2026-01-13' }),
    '{"completion_rate":0,"average_score_by_week":[{"week":"2026-01-05","average_score":null,"count":0},{"week":"2026-01-12","average_score":null,"count":0}],"interviews_by_status":{"completed":0,"in_progress":1,"expired":0},"total_interviews":1}')
})

t.test('compare\'s keys: after the answer\'s, in the schemas\' order, the previous weeks zero-filled', async t => {
  const range = { from: '2026-01-14', to: '2026-01-20' }
  const window = comparisonWindow(range, { first: mondayOf(range.from), last: mondayOf(range.to) })
  t.same(window, { previous: { from: '2025-12-31', to: '2026-01-06' }, weeks: { first: '2025-12-29', last: '2026-01-19' }, splitAt: '2026-01-12' }, 'two weeks spanned: two weeks back')
  const written = analyticsBody({
    byStatus: { completed: 3, in_progress: 0, expired: 0 },
    bins: '[["2026-01-12",1,50]]',
    version: 'v',
    comparison: { period: { completed: 1, averageScore: '50' }, previous: { completed: 2, averageScore: '1e-05', bins: '[["2026-01-05",2,1e-05]]' }, averageChange: '49.99999' },
  }, range, window)
  const body = JSON.parse(written) as Record<string, Record<string, unknown>>
  t.same(Object.keys(body), Object.keys(JobAnalyticsSchema.properties))
  t.same(Object.keys(body.period!), Object.keys(AnalyticsPeriodSchema.properties))
  t.same(Object.keys(body.previous!), Object.keys(AnalyticsPreviousPeriodSchema.properties))
  t.same(Object.keys(body.change!), Object.keys(AnalyticsPeriodChangeSchema.properties))
  t.same(body.previous!.average_score_by_week, [{ week: '2025-12-29', average_score: null, count: 0 }, { week: '2026-01-05', average_score: 1e-05, count: 2 }])
  t.match(written, /"change":\{"completed":-1,"average_score":49\.99999\}\}$/, 'the numbers as written')
})
