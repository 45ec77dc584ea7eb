// Every time-zone name a caller might send (every zone and link of the service's tzdata
// release, PostgreSQL's abbreviations and zone names, the runtime's zones, ICU's legacy IDs,
// odd spellings) gives either exactly the weeks of the IANA zone it names, by the service's
// rules, or a 400 in the error shape; and only a name that is no IANA zone or link is refused.
// The reference is js-joda reading the same tzdata release (test/helpers/zone-reference.ts):
// independent of the service's SQL and of PostgreSQL's tzdata and the runtime's, which are
// never asked (this database's tzdata is older or newer than the rules, and the test runs on
// Node 20 and Node 24, whose tzdata differ too).
import { ChronoUnit, LocalDate, LocalDateTime, LocalTime, ZonedDateTime, ZoneId } from '@js-joda/core'
import t from 'tap'
import { foldScreenStats } from '../../src/admin/screen-stats.js'
import { zoneRules } from '../../src/zones/rules.js'
import { buildTestApp } from '../helpers/app.js'
import { closeEnough } from '../helpers/property.js'
import { createJob, createScreens, createTenant, type ScreenInput } from '../helpers/fixtures.js'
import { zoneReference } from '../helpers/zone-reference.js'

// One request per name: more than the default rate limit allows a key in a minute. No fold by
// the instance: the test says when the deltas become summaries.
const { app, prisma, db } = await buildTestApp(t, { env: { RATE_LIMIT_MAX: '100000', SUMMARY_FOLD_INTERVAL_MS: '0' } })
const rules = zoneRules()
const reference = zoneReference()
const pro = await createTenant(prisma, { plan: 'pro' })
const analytics = (jobId: string, tz: string, headers: Record<string, string> = {}) =>
  app.inject({ url: `/api/jobs/${jobId}/analytics?${new URLSearchParams({ tz }).toString()}`, headers: { ...pro.auth, ...headers } })

const HOUR = 3_600_000
const QUARTER = 900_000

// Completions on both sides of every quarter hour at which a local Monday 00:00 can fall
// (UTC offsets from +14:00 to -12:00: Sunday 10:00 to Monday 12:00 UTC), one second before
// and exactly at it, in weeks of winter, summer and the seasons' changes, in several years:
// a zone read with a wrong offset, or without its daylight saving, moves some of them to
// another week. The years before 1980 are stored another way by the summaries.
function sundayOnOrAfter (year: number, month: number, day: number): number {
  const d = new Date(Date.UTC(year, month - 1, day))
  return d.getTime() + ((7 - d.getUTCDay()) % 7) * 24 * HOUR
}
const sundays = [1976, 1989, 1999, 2008, 2017, 2026].flatMap(year => [[1, 10], [3, 28], [7, 10], [10, 27]].map(([m, d]) => sundayOnOrAfter(year, m!, d!)))
const windowInstants = sundays.flatMap(sunday => Array.from({ length: 105 }, (_, q) => sunday + 10 * HOUR + q * QUARTER).flatMap(b => [b - 1000, b]))

// The zones whose rules changed in 2026 (Vancouver and Edmonton keep daylight time from
// 2026-11-01, Casablanca and El Aaiun change on 2026-09-20; tzdata 2025b, this machine's
// PostgreSQL, has neither): completions at each local Monday 00:00 from August to December
// 2026, and one second before, as the service's rules place it and as the 2025b rules did.
const CHANGED_IN_2026 = ['America/Vancouver', 'America/Edmonton', 'Africa/Casablanca', 'Africa/El_Aaiun']
const olderReference = zoneReference(new URL('../../node_modules/moment-timezone-2025b/data/packed/latest.json', import.meta.url).pathname)
function localMondays (zone: string, ref: 'current' | 'older'): number[] {
  const file = ref === 'current' ? reference : olderReference
  file.mondayOf(0, zone) // loads that release into js-joda
  const instants: number[] = []
  for (let monday = LocalDate.parse('2026-08-31'); monday.isBefore(LocalDate.parse('2027-01-04')); monday = monday.plusWeeks(1)) {
    const start = ZonedDateTime.of(LocalDateTime.of(monday, LocalTime.MIDNIGHT), ZoneId.of(zone)).toInstant().toEpochMilli()
    instants.push(start - 1000, start)
  }
  return instants
}
const changeInstants = CHANGED_IN_2026.flatMap(zone => [...localMondays(zone, 'current'), ...localMondays(zone, 'older')])
reference.mondayOf(0, 'UTC') // back to the service's release

const completions = (instants: number[]): ScreenInput[] => instants.map((ms, i) => ({ status: 'completed', score: i % 7 === 0 ? null : i % 101, completedAt: new Date(ms) }))
const instants = [...windowInstants, ...changeInstants]
const screens = completions(instants)
const job = await createJob(prisma, pro)
await createScreens(prisma, job.id, screens)
// Read from the summaries as they are folded (segments and boundary windows), not from the
// deltas the writes appended.
await foldScreenStats(prisma)

// The reference: a completion's week is the Monday of its local date in the zone.
interface Bin { week: string, count: number, average_score: number | null }
function weeklyBins (zone: string, of: ScreenInput[], at: number[]): Bin[] {
  const byWeek = new Map<string, { count: number, scored: number, sum: number }>()
  of.forEach((s, i) => {
    const week = reference.mondayOf(at[i]!, zone)
    const bin = byWeek.get(week) ?? { count: 0, scored: 0, sum: 0 }
    bin.count++
    if (s.score !== null && s.score !== undefined) { bin.scored++; bin.sum += s.score }
    byWeek.set(week, bin)
  })
  return [...byWeek].sort(([a], [b]) => a.localeCompare(b)).map(([week, b]) => ({ week, count: b.count, average_score: b.scored === 0 ? null : b.sum / b.scored }))
}
const sameBins = (got: Bin[], want: Bin[]): boolean =>
  got.length === want.length && got.every((b, i) => b.week === want[i]!.week && b.count === want[i]!.count && closeEnough(b.average_score, want[i]!.average_score))

// The names: every zone and link of the rules, PostgreSQL's abbreviations and zone names (not
// the posix/ and right/ copies), the runtime's zones, ICU's legacy IDs, and a few spellings
// and odd names.
const ianaNames = rules.names()
const abbreviations = (await prisma.$queryRawUnsafe<Array<{ abbrev: string }>>('SELECT abbrev FROM pg_timezone_abbrevs')).map(r => r.abbrev)
const databaseZones = (await prisma.$queryRawUnsafe<Array<{ name: string }>>("SELECT name FROM pg_timezone_names WHERE name !~ '^(posix|right)/'")).map(r => r.name)
const runtimeZones = Intl.supportedValuesOf('timeZone')
const ICU_LEGACY = ['ACT', 'AET', 'AGT', 'ART', 'AST', 'BET', 'BST', 'CAT', 'CNT', 'CST', 'CTT', 'EAT', 'ECT', 'IET', 'IST', 'JST', 'MIT', 'NET', 'NST', 'PLT', 'PNT', 'PRT', 'PST', 'SST', 'VST',
  'SystemV/AST4', 'SystemV/AST4ADT', 'SystemV/CST6', 'SystemV/CST6CDT', 'SystemV/EST5', 'SystemV/EST5EDT', 'SystemV/HST10', 'SystemV/MST7', 'SystemV/MST7MDT', 'SystemV/PST8', 'SystemV/PST8PDT', 'SystemV/YST9', 'SystemV/YST9YDT']
const others = ['CET', 'EET', 'WET', 'MET', 'EST', 'MST', 'HST', 'EST5EDT', 'UTC', 'GMT', 'Zulu', 'UCT', 'Universal', 'Etc/UTC', 'Etc/GMT+5', 'Etc/GMT-14', 'Etc/GMT+12', 'Etc/GMT+13',
  'Asia/Calcutta', 'Asia/Kolkata', 'US/Pacific', 'US/Pacific-New', 'Canada/East-Saskatchewan', 'Canada/Pacific', 'Canada/Mountain', 'Europe/Kiev', 'Europe/Kyiv', 'America/Buenos_Aires', 'America/Argentina/ComodRivadavia',
  'Asia/Riyadh87', 'Mideast/Riyadh87', 'Etc/Unknown', 'Factory', 'localtime', 'posixrules', 'posix/Europe/Berlin', 'right/Europe/Berlin', 'GMT+5', 'UTC+1', 'Z',
  'ist', 'Ist', 'pst', 'cet', 'est', 'utc', 'europe/berlin', 'AMERICA/NEW_YORK', 'EtC/gMt+5', 'asia/calcutta', 'systemv/est5edt', 'america/vancouver', 'AFRICA/CASABLANCA']
const names = [...new Set([...ianaNames, ...abbreviations, ...databaseZones, ...runtimeZones, ...ICU_LEGACY, ...others])]

interface Outcome { name: string, status: number, bins?: Bin[], message?: string, etag?: string, tzdata?: string }
const outcomes = new Map<string, Outcome>()
const failures: string[] = []
const references = new Map<string, Bin[]>()
const expected = (zone: string): Bin[] => references.get(zone) ?? references.set(zone, weeklyBins(zone, screens, instants)).get(zone)!

for (const name of names) {
  const res = await analytics(job.id, name)
  const outcome: Outcome = { name, status: res.statusCode }
  const zone = rules.zoneOf(name)
  if (res.statusCode === 200) {
    outcome.bins = res.json().average_score_by_week
    outcome.etag = String(res.headers.etag)
    outcome.tzdata = String(res.headers['tzdata-version'])
    if (zone === undefined) failures.push(`${name}: answered, but it is no zone or link of tzdata ${rules.version}`)
    else if (!sameBins(outcome.bins!, expected(zone))) {
      const want = expected(zone)
      const i = outcome.bins!.findIndex((b, i) => JSON.stringify(b) !== JSON.stringify(want[i]))
      failures.push(`${name} (as ${zone}): first differing bin ${JSON.stringify(outcome.bins![i])}, the reference's ${JSON.stringify(want[i])}`)
    }
  } else if (res.statusCode === 400) {
    const body = res.json()
    outcome.message = body.details?.find((d: { path: string }) => d.path === 'querystring/tz')?.message
    if (body.code !== 'invalid_request' || typeof body.request_id !== 'string' || outcome.message === undefined) failures.push(`${name}: a 400 not in the error shape: ${res.body}`)
    if (zone !== undefined) failures.push(`${name}: refused, but it is a ${name === zone ? 'zone' : 'link'} of tzdata ${rules.version}: ${outcome.message}`)
  } else {
    failures.push(`${name}: status ${res.statusCode}: ${res.body}`)
  }
  outcomes.set(name, outcome)
}
const answered = [...outcomes.values()].filter(o => o.status === 200)
const refused = [...outcomes.values()].filter(o => o.status === 400)
const tally = (list: string[]) => {
  const got = list.map(n => outcomes.get(n)!)
  return `${got.filter(o => o.status === 200).length} answered, ${got.filter(o => o.status === 400).length} refused`
}
t.comment(`figures: time zones: ${answered.length} answered exactly, ${refused.length} refused (${names.length} names, ${screens.length} completions, ${db.kind} database, rules tzdata ${rules.version}, Node ${process.versions.node} with tzdata ${process.versions.tz})`)
t.comment(`figures: time zones: of the rules' ${ianaNames.length} zones and links ${tally(ianaNames)}; of PostgreSQL's ${abbreviations.length} abbreviations ${tally(abbreviations)}; of its ${databaseZones.length} zone names ${tally(databaseZones)}; of the runtime's ${runtimeZones.length} zones ${tally(runtimeZones)}; of ICU's ${ICU_LEGACY.length} legacy IDs ${tally(ICU_LEGACY)}`)
t.comment(`time zones refused: ${refused.map(o => o.name).join(' ')}`)

t.test('every name: exactly the weeks of the zone it names by the service\'s rules, or a 400 in the error shape for a name that is no IANA zone or link', async t => {
  t.same(failures, [], `${names.length} names`)
  t.equal(ianaNames.filter(n => outcomes.get(n)?.status !== 200).length, 0, `none of the ${ianaNames.length} zones and links of tzdata ${rules.version} refused`)
  t.ok(answered.length >= ianaNames.length && refused.length > 100, 'both kinds are exercised')
  t.ok(screens.length > 500, 'above ANALYTICS_SCREENS_READ_MAX: answered from the summaries')
  t.same([...new Set(answered.map(o => o.tzdata))], [rules.version], 'every answer names the rules it was computed with')
})

t.test('the zones whose rules changed in 2026, on both sides of the change and at local Monday 00:00: exact from the summaries, the unfolded deltas and the screens', async t => {
  for (const zone of CHANGED_IN_2026) {
    t.equal(outcomes.get(zone)?.status, 200, `${zone}: answered`)
    t.ok(sameBins(outcomes.get(zone)!.bins!, expected(zone)), `${zone}: from the folded summaries`)
  }
  // The same completions in a job of their own, small enough to be read from its screens,
  // then larger (deltas not folded), then folded.
  const small = await createJob(prisma, pro)
  const changed = completions(changeInstants)
  await createScreens(prisma, small.id, changed)
  t.ok(changed.length <= 500)
  const check = async (how: string, of: ScreenInput[], at: number[]): Promise<void> => {
    for (const name of [...CHANGED_IN_2026, 'Canada/Pacific', 'Canada/Mountain']) {
      const res = await analytics(small.id, name)
      t.equal(res.statusCode, 200)
      t.ok(sameBins(res.json().average_score_by_week, weeklyBins(rules.zoneOf(name)!, of, at)), `${name}: ${how}`)
    }
  }
  await check('from the screens', changed, changeInstants)
  const padding = Array.from({ length: 400 }, (_, i) => Date.UTC(2020, 0, 1) + i * 7 * 24 * HOUR / 3)
  await createScreens(prisma, small.id, completions(padding))
  await check('from the unfolded deltas', [...changed, ...completions(padding)], [...changeInstants, ...padding])
  await foldScreenStats(prisma)
  await check('from the folded summaries', [...changed, ...completions(padding)], [...changeInstants, ...padding])
  // What the change does: a completion at Vancouver's local Monday 00:00 of 2026-11-30 (07:00
  // UTC by 2026f, daylight time kept) is in that week; by 2025b (standard time, 08:00 UTC) it
  // was Sunday 23:00, the week before.
  const vancouver = ZonedDateTime.of(LocalDateTime.parse('2026-11-30T00:00'), ZoneId.of('America/Vancouver')).toInstant().toEpochMilli()
  t.equal(new Date(vancouver).toISOString(), '2026-11-30T07:00:00.000Z')
  t.equal(reference.mondayOf(vancouver, 'America/Vancouver'), '2026-11-30')
  t.equal(olderReference.mondayOf(vancouver, 'America/Vancouver'), '2026-11-23')
  reference.mondayOf(0, 'UTC')
})

t.test('ICU legacy IDs are refused, with the zone ICU reads them as where it is one', async t => {
  for (const name of [...ICU_LEGACY, 'ist', 'Ist', 'pst', 'systemv/est5edt']) t.equal(outcomes.get(name)?.status, 400, name)
  for (const [name, zone] of [['IST', 'Asia/Kolkata'], ['ist', 'Asia/Kolkata'], ['PST', 'America/Los_Angeles'], ['NST', 'Pacific/Auckland'], ['AGT', 'America/Argentina/Buenos_Aires'], ['VST', 'Asia/Ho_Chi_Minh']]) {
    t.match(outcomes.get(name!)?.message ?? '', `did you mean ${zone}?`, `${name}: ${zone}`)
  }
  t.match(outcomes.get('IST')?.message, /IANA time zone name.*Europe\/Berlin/, 'the message says which names are accepted')
  t.notMatch(outcomes.get('SystemV/AST4')?.message ?? '', 'did you mean', 'no suggestion that would be a legacy ID too')
})

t.test('every zone of the runtime and of PostgreSQL that is an IANA name is answered; names IANA dropped and odd ones are refused', async t => {
  const refusedIana = [...runtimeZones, ...databaseZones].filter(n => rules.zoneOf(n) !== undefined && outcomes.get(n)?.status !== 200)
  t.same(refusedIana, [])
  t.comment(`names of the runtime or PostgreSQL that are no zone or link of tzdata ${rules.version}: ${[...runtimeZones, ...databaseZones].filter(n => rules.zoneOf(n) === undefined).join(' ') || 'none'}`)
  for (const name of ['UTC', 'utc', 'Etc/UTC', 'GMT', 'Zulu', 'UCT', 'Asia/Calcutta', 'Asia/Kolkata', 'asia/calcutta', 'US/Pacific', 'Etc/GMT+5', 'EtC/gMt+5', 'europe/berlin', 'AMERICA/NEW_YORK', 'america/vancouver', 'AFRICA/CASABLANCA', 'Canada/Pacific', 'Canada/Mountain']) t.equal(outcomes.get(name)?.status, 200, name)
  for (const name of ['Etc/GMT+13', 'GMT+5', 'UTC+1', 'Z', 'Factory', 'localtime', 'posixrules', 'posix/Europe/Berlin', 'right/Europe/Berlin', 'US/Pacific-New', 'Canada/East-Saskatchewan']) t.equal(outcomes.get(name)?.status, 400, name)
  t.match(outcomes.get('US/Pacific-New')?.message, new RegExp(`is not a zone or link of tzdata ${rules.version}; did you mean America/Los_Angeles\\?`))
})

t.test('the IANA names PostgreSQL would read as abbreviations are answered as their IANA zones', async t => {
  // CET is, in IANA, a link to Europe/Brussels: daylight saving in summer, where PostgreSQL's
  // abbreviation is a fixed +01:00. EST is a link to America/Panama.
  for (const [name, zone] of [['CET', 'Europe/Brussels'], ['cet', 'Europe/Brussels'], ['MET', 'Europe/Brussels'], ['EET', 'Europe/Athens'], ['WET', 'Europe/Lisbon'], ['EST', 'America/Panama'], ['MST', 'America/Phoenix'], ['HST', 'Pacific/Honolulu']]) {
    t.equal(outcomes.get(name!)?.status, 200, `${name}`)
    t.same(outcomes.get(name!)?.bins, expected(zone!), `${name} as ${zone}`)
  }
  t.not(JSON.stringify(expected('Europe/Brussels')), JSON.stringify(expected('Etc/GMT-1')), 'which a fixed +01:00 would not give')
})

t.test('the issue\'s example: 2026-01-04T20:00Z is in the week of 2026-01-05 in Asia/Kolkata; tz=IST is refused', async t => {
  const small = await createJob(prisma, pro)
  await createScreens(prisma, small.id, [{ status: 'completed', score: 10, completedAt: new Date('2026-01-04T20:00:00Z') }])
  t.same((await analytics(small.id, 'Asia/Kolkata')).json().average_score_by_week, [{ week: '2026-01-05', count: 1, average_score: 10 }])
  t.same((await analytics(small.id, 'Asia/Calcutta')).json().average_score_by_week, [{ week: '2026-01-05', count: 1, average_score: 10 }])
  t.equal((await analytics(small.id, 'IST')).statusCode, 400)
})

t.test('spellings of a name are answered alike, and refused alike', async t => {
  for (const [a, b] of [['IST', 'ist'], ['CET', 'cet'], ['UTC', 'utc'], ['Europe/Berlin', 'europe/berlin'], ['America/New_York', 'AMERICA/NEW_YORK'], ['Etc/GMT+5', 'EtC/gMt+5'], ['SystemV/EST5EDT', 'systemv/est5edt']]) {
    const [x, y] = [outcomes.get(a!)!, outcomes.get(b!)!]
    t.same([y.status, y.bins, y.etag], [x.status, x.bins, x.etag], `${a} and ${b}`)
  }
})

t.test('the ETag names the zone and the rules: shared by the names of one zone, never by two zones', async t => {
  const etag = (name: string) => outcomes.get(name)!.etag
  t.equal(etag('CET'), etag('Europe/Brussels'), 'CET is a link to Europe/Brussels')
  t.equal(etag('Asia/Calcutta'), etag('Asia/Kolkata'))
  t.equal(etag('UTC'), etag('Etc/UTC'))
  t.equal(etag('Canada/Pacific'), etag('America/Vancouver'))
  const zonesByEtag = new Map<string, Set<string>>()
  for (const o of answered) zonesByEtag.set(o.etag!, (zonesByEtag.get(o.etag!) ?? new Set()).add(rules.zoneOf(o.name)!))
  t.same([...zonesByEtag].filter(([, zones]) => zones.size > 1).map(([, zones]) => [...zones]), [], 'no ETag of two zones')
  const notModified = await analytics(job.id, 'CET', { 'if-none-match': etag('Europe/Brussels')! })
  t.equal(notModified.statusCode, 304, 'the same zone: 304')
  t.equal(notModified.headers['tzdata-version'], rules.version, 'which names the rules too')
  t.equal((await analytics(job.id, 'Europe/Paris', { 'if-none-match': etag('Europe/Brussels')! })).statusCode, 200, 'another zone: 200')
  for (const name of ['IST', 'US/Pacific-New']) {
    const res = await analytics(job.id, name, { 'if-none-match': '*' })
    t.equal(res.statusCode, 400, `${name} with If-None-Match: still a 400`)
    t.equal(res.headers.etag, undefined)
  }
})

t.test('a day of the week is never lost: every week the service answers, and every week of the reference, is a Monday', async t => {
  const notMondays = (weeks: string[]): string[] => weeks.filter(w => LocalDate.parse(w).dayOfWeek().value() !== 1 || ChronoUnit.DAYS.between(LocalDate.parse('1970-01-05'), LocalDate.parse(w)) % 7 !== 0)
  const served = answered.flatMap(o => o.bins!.map(b => b.week))
  const reference = [...references.values()].flat().map(b => b.week)
  t.ok(served.length > 1000 && reference.length > 1000, `${served.length} weeks answered, ${reference.length} of the reference`)
  t.same(notMondays(served), [], 'the service\'s')
  t.same(notMondays(reference), [], 'the reference\'s (or comparing with it would prove little)')
})
