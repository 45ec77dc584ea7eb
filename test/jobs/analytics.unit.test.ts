import t from 'tap'
import { addDays, buildAnalytics, completionRate, mondayOf, rangeProblems, weeksOverlapping, zeroFill } from '../../src/jobs/analytics/arithmetic.js'
import { readTimeZone } from '../../src/zones/names.js'
import { zoneRules } from '../../src/zones/rules.js'

t.test('completion rate: integer percent, halves up, 0 without screens', async t => {
  t.equal(completionRate(0, 0), 0)
  t.equal(completionRate(0, 5), 0)
  t.equal(completionRate(5, 5), 100)
  t.equal(completionRate(1, 8), 13, '12.5 rounds up')
  t.equal(completionRate(3, 8), 38, '37.5 rounds up')
  t.equal(completionRate(1, 3), 33)
  t.equal(completionRate(2, 3), 67)
  t.equal(completionRate(1, 200), 1, '0.5 rounds up')
  t.equal(completionRate(1, 201), 0, '0.497 rounds down')
  for (let total = 1; total <= 400; total++) {
    for (let completed = 0; completed <= total; completed++) {
      const exact = (100 * completed) / total
      const rate = completionRate(completed, total)
      if (!(rate - 0.5 <= exact && exact < rate + 0.5)) t.fail(`${completed}/${total}: ${rate} for ${exact}`)
    }
  }
})

t.test('Mondays', async t => {
  t.equal(mondayOf('2026-01-05'), '2026-01-05', 'a Monday is its own week')
  t.equal(mondayOf('2026-01-11'), '2026-01-05', 'Sunday belongs to the week before')
  t.equal(mondayOf('2026-01-01'), '2025-12-29', 'across a year boundary')
  t.equal(mondayOf('2024-03-01'), '2024-02-26', 'across a leap day')
  t.equal(addDays('2024-02-28', 1), '2024-02-29')
})

t.test('weeks overlapping a range, and zero-fill', async t => {
  t.same(weeksOverlapping('2026-01-01', '2026-01-12'), ['2025-12-29', '2026-01-05', '2026-01-12'])
  t.same(weeksOverlapping('2026-01-05', '2026-01-05'), ['2026-01-05'])
  t.same(zeroFill([{ week: '2026-01-05', count: 2, average_score: 50 }], '2026-01-01', '2026-01-12'), [
    { week: '2025-12-29', count: 0, average_score: null },
    { week: '2026-01-05', count: 2, average_score: 50 },
    { week: '2026-01-12', count: 0, average_score: null },
  ])
  t.equal(weeksOverlapping('2021-01-01', '2026-01-01').length, 262, 'five years of weeks')
})

const isTimeZone = (name: string): boolean => 'zone' in readTimeZone(name, zoneRules())

t.test('time zones: IANA names only', async t => {
  for (const ok of ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'America/Argentina/Buenos_Aires', 'Etc/GMT+3', 'Asia/Calcutta']) t.ok(isTimeZone(ok), ok)
  for (const bad of ['', 'Mars/Base', 'UTC+3', '+01:00', 'EST5EDT,M3.2.0,M11.1.0', 'Europe/Berlin; DROP TABLE jobs', '../etc/passwd', 'a'.repeat(70)]) t.notOk(isTimeZone(bad), bad)
})

t.test('time zones: the memo of accepted names changes no answer', async t => {
  // Asked twice: the second answer comes from the memo for the good ones.
  for (let round = 0; round < 2; round++) {
    t.ok(isTimeZone('Asia/Kathmandu'), `Asia/Kathmandu, round ${round}`)
    t.ok(isTimeZone('asia/KATHMANDU'), `case-insensitive like the runtime, round ${round}`)
    t.notOk(isTimeZone('Asia/Kathmandu/x'), `a longer name is not a known one, round ${round}`)
    t.notOk(isTimeZone('Mars/Base'), `a refused name stays refused, round ${round}`)
  }
})

t.test('range checks', async t => {
  t.same(rangeProblems(undefined, undefined), [])
  t.same(rangeProblems('2026-01-01', '2026-01-01'), [])
  t.match(rangeProblems('2026-01-02', '2026-01-01'), [{ path: 'querystring/from' }])
  t.match(rangeProblems('2026-01-01', undefined), [{ path: 'querystring/to' }])
  t.match(rangeProblems(undefined, '2026-01-01'), [{ path: 'querystring/from' }])
  t.same(rangeProblems('2021-01-01', '2026-01-01'), [], 'exactly five years is allowed')
  t.match(rangeProblems('2021-01-01', '2026-01-02'), [{ path: 'querystring/to' }], 'a day more is not')
  t.same(rangeProblems('2020-02-29', '2025-03-01'), [], 'from a leap day')
})

t.test('the analytics object from counts and bins', async t => {
  t.same(buildAnalytics({ byStatus: { completed: 0, in_progress: 0, expired: 0 }, weeks: [] }), { completion_rate: 0, average_score_by_week: [], interviews_by_status: { completed: 0, in_progress: 0, expired: 0 }, total_interviews: 0 })
  const rows = { byStatus: { completed: 1, in_progress: 0, expired: 7 }, weeks: [{ week: '2026-01-05', count: 1, averageScore: 40 }] }
  t.same(buildAnalytics(rows), {
    completion_rate: 13,
    average_score_by_week: [{ week: '2026-01-05', count: 1, average_score: 40 }],
    interviews_by_status: { completed: 1, in_progress: 0, expired: 7 },
    total_interviews: 8,
  })
  t.same(buildAnalytics(rows, { from: '2026-01-05', to: '2026-01-12' }).average_score_by_week.map(b => b.count), [1, 0], 'zero-filled in a range')
})
