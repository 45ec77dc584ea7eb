import t from 'tap'
import { foldScreenStats } from '../../src/admin/screen-stats.js'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'
import { intlMondayOf } from '../helpers/intl-zones.js'

// Weeks in the summers (and winters) of 2600 and 2750 (issue 40, part 2): completions around
// local Monday 00:00 in America/New_York and Europe/Berlin (Sunday 21:00 to Monday 07:00 UTC,
// every quarter hour, a second before and at it) fall in the week Intl puts them in: in
// daylight time, which the rules' data (to 2499) did not have. Read from the job's screens (a
// small job), from the unfolded deltas and from the folded summaries (ANALYTICS_SCREENS_READ_MAX 0).

const HOUR = 3_600_000
const sundayOnOrAfter = (year: number, month: number, day: number): number => {
  const d = new Date(Date.UTC(year, month - 1, day))
  return d.getTime() + ((7 - d.getUTCDay()) % 7) * 24 * HOUR
}
const instants = [2600, 2750].flatMap(year => [[1, 10], [6, 10], [7, 20]].map(([m, d]) => sundayOnOrAfter(year, m!, d!)))
  .flatMap(sunday => Array.from({ length: 41 }, (_, q) => sunday + 21 * HOUR + q * HOUR / 4).flatMap(b => [b - 1000, b]))
const ZONES = ['America/New_York', 'Europe/Berlin']

interface Bin { week: string, count: number }
const expected = (zone: string): Bin[] => {
  const byWeek = new Map<string, number>()
  for (const ms of instants) { const week = intlMondayOf(ms, zone); byWeek.set(week, (byWeek.get(week) ?? 0) + 1) }
  return [...byWeek].sort(([a], [b]) => a.localeCompare(b)).map(([week, count]) => ({ week, count }))
}

for (const path of ['the job\'s screens', 'the summaries'] as const) {
  t.test(`read from ${path}: every completion in the week Intl puts it in`, async t => {
    const { app, prisma } = await buildTestApp(t, { env: { SUMMARY_FOLD_INTERVAL_MS: '0', ...(path === 'the summaries' ? { ANALYTICS_SCREENS_READ_MAX: '0' } : {}) } })
    const tenant = await createTenant(prisma, { plan: 'pro' })
    const job = await createJob(prisma, tenant)
    await createScreens(prisma, job.id, instants.map((ms, i) => ({ status: 'completed', score: i % 100, completedAt: new Date(ms) })))
    for (const stage of path === 'the summaries' ? ['unfolded deltas', 'folded'] : ['screens']) {
      if (stage === 'folded') await foldScreenStats(prisma)
      for (const zone of ZONES) {
        const res = await app.inject({ url: `/api/jobs/${job.id}/analytics?tz=${encodeURIComponent(zone)}`, headers: tenant.auth })
        t.equal(res.statusCode, 200)
        const got = (res.json().average_score_by_week as Array<Bin & { average_score: number | null }>).map(({ week, count }) => ({ week, count }))
        t.same(got, expected(zone), `${zone}, ${stage}: ${got.length} weeks as Intl reads them`)
      }
    }
    const monday4am = sundayOnOrAfter(2600, 6, 10) + 28 * HOUR
    t.not(intlMondayOf(monday4am - 1000, 'America/New_York'), intlMondayOf(monday4am, 'America/New_York'), 'in June 2600 a New York week begins at 04:00 UTC: daylight time')
  })
}
