// Every time-zone name a caller might send (PostgreSQL's abbreviations, the runtime's zones,
// PostgreSQL's zone names and links, ICU's legacy IDs) gives either a 400 in the error shape
// or exactly the weeks the named IANA zone gives. The reference reads local dates with the
// runtime's Intl, never with PostgreSQL: a reference that asked PostgreSQL would share its
// reading of `IST` (an abbreviation, +02:00) and miss it. PostgreSQL is asked only to say
// which names it knows, and, on a failure, how it read the instants that differ.
import t from 'tap'
import { foldScreenStats } from '../../src/admin/screen-stats.js'
import { buildTestApp } from '../helpers/app.js'
import { closeEnough } from '../helpers/property.js'
import { createJob, createScreens, createTenant, type ScreenInput } from '../helpers/fixtures.js'
import { readDifferently, readingsAt } from '../helpers/time-zones.js'

// One request per name: more than the default rate limit allows a key in a minute.
const { app, prisma, db } = await buildTestApp(t, { env: { RATE_LIMIT_MAX: '100000' } })
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
const instants = sundays.flatMap(sunday => Array.from({ length: 105 }, (_, q) => sunday + 10 * HOUR + q * QUARTER).flatMap(b => [b - 1000, b]))
const screens: ScreenInput[] = instants.map((ms, i) => ({ status: 'completed', score: i % 7 === 0 ? null : i % 101, completedAt: new Date(ms) }))
const job = await createJob(prisma, pro)
await createScreens(prisma, job.id, screens)
// Read from the summaries as they are folded (segments and boundary windows), not from the
// deltas the writes appended: the instance folds them within a second, but not before the
// first names are asked.
await foldScreenStats(prisma)

// The reference: a completion's week is the Monday of its local date in the zone, as Intl
// reads the name.
interface Bin { week: string, count: number, average_score: number | null }
function mondayOf (day: string): string {
  const ms = Date.parse(`${day}T00:00:00Z`)
  return new Date(ms - ((new Date(ms).getUTCDay() + 6) % 7) * 24 * HOUR).toISOString().slice(0, 10)
}
const localDay = (format: Intl.DateTimeFormat, ms: number): string => format.format(ms)
const dayFormat = (tz: string) => new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' })
const runtimeZone = (name: string): string | undefined => {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return undefined
  }
}
function weeklyBins (tz: string): Bin[] {
  const format = dayFormat(tz)
  const byWeek = new Map<string, { count: number, scored: number, sum: number }>()
  screens.forEach((s, i) => {
    const week = mondayOf(localDay(format, instants[i]!))
    const bin = byWeek.get(week) ?? { count: 0, scored: 0, sum: 0 }
    bin.count++
    if (s.score !== null && s.score !== undefined) { bin.scored++; bin.sum += s.score }
    byWeek.set(week, bin)
  })
  return [...byWeek].sort(([a], [b]) => a.localeCompare(b)).map(([week, b]) => ({ week, count: b.count, average_score: b.scored === 0 ? null : b.sum / b.scored }))
}
// One computation per zone the runtime resolves names to (a link and its zone are the same
// ICU zone); that grouping is itself checked below, name by name, on a sample of instants.
const references = new Map<string, Bin[]>()
const reference = (zone: string): Bin[] => references.get(zone) ?? references.set(zone, weeklyBins(zone)).get(zone)!

const sameBins = (got: Bin[], want: Bin[]): boolean =>
  got.length === want.length && got.every((b, i) => b.week === want[i]!.week && b.count === want[i]!.count && closeEnough(b.average_score, want[i]!.average_score))

// The names: PostgreSQL's abbreviations and zone names (its zone database, links included;
// not the posix/ and right/ copies), the runtime's zones, ICU's legacy IDs, and a few links,
// spellings and odd names.
const abbreviations = (await prisma.$queryRawUnsafe<Array<{ abbrev: string }>>('SELECT abbrev FROM pg_timezone_abbrevs')).map(r => r.abbrev)
const databaseZones = (await prisma.$queryRawUnsafe<Array<{ name: string }>>("SELECT name FROM pg_timezone_names WHERE name !~ '^(posix|right)/'")).map(r => r.name)
const runtimeZones = Intl.supportedValuesOf('timeZone')
const ICU_LEGACY = ['ACT', 'AET', 'AGT', 'ART', 'AST', 'BET', 'BST', 'CAT', 'CNT', 'CST', 'CTT', 'EAT', 'ECT', 'IET', 'IST', 'JST', 'MIT', 'NET', 'NST', 'PLT', 'PNT', 'PRT', 'PST', 'SST', 'VST',
  'SystemV/AST4', 'SystemV/AST4ADT', 'SystemV/CST6', 'SystemV/CST6CDT', 'SystemV/EST5', 'SystemV/EST5EDT', 'SystemV/HST10', 'SystemV/MST7', 'SystemV/MST7MDT', 'SystemV/PST8', 'SystemV/PST8PDT', 'SystemV/YST9', 'SystemV/YST9YDT']
const others = ['CET', 'EET', 'WET', 'MET', 'EST', 'MST', 'HST', 'EST5EDT', 'UTC', 'GMT', 'Zulu', 'UCT', 'Universal', 'Etc/UTC', 'Etc/GMT+5', 'Etc/GMT-14', 'Etc/GMT+12', 'Etc/GMT+13',
  'Asia/Calcutta', 'Asia/Kolkata', 'US/Pacific', 'US/Pacific-New', 'Canada/East-Saskatchewan', 'Europe/Kiev', 'Europe/Kyiv', 'America/Buenos_Aires', 'America/Argentina/ComodRivadavia',
  'Asia/Riyadh87', 'Mideast/Riyadh87', 'Etc/Unknown', 'Factory', 'localtime', 'posixrules', 'posix/Europe/Berlin', 'right/Europe/Berlin', 'GMT+5', 'UTC+1', 'Z',
  'ist', 'Ist', 'pst', 'cet', 'est', 'utc', 'europe/berlin', 'AMERICA/NEW_YORK', 'EtC/gMt+5', 'asia/calcutta', 'systemv/est5edt']
const names = [...new Set([...abbreviations, ...databaseZones, ...runtimeZones, ...ICU_LEGACY, ...others])]

interface Outcome { name: string, status: number, bins?: Bin[], message?: string, etag?: string }
const outcomes = new Map<string, Outcome>()
const failures: string[] = []

// On a difference, PostgreSQL says how it read the instants whose week differs, and Intl how
// it did: the zone, the instant and both readings, for the report.
async function explain (name: string, zone: string): Promise<string> {
  const rows = await prisma.$queryRawUnsafe<Array<{ t: Date, local: string }>>('SELECT completed_at AS t, to_char(completed_at AT TIME ZONE $1, \'YYYY-MM-DD"T"HH24:MI:SS\') AS local FROM screens WHERE job_id = $2::uuid ORDER BY completed_at', zone, job.id)
  const intl = new Intl.DateTimeFormat('sv-SE', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
  const differing = rows.filter(r => mondayOf(r.local.slice(0, 10)) !== mondayOf(localDay(dayFormat(zone), r.t.getTime())))
  return `${name} (read as ${zone}): ${differing.length} instants in another week; ${differing.slice(0, 3).map(r => `${r.t.toISOString()} is ${r.local} for PostgreSQL, ${intl.format(r.t).replace(' ', 'T')} for Intl`).join('; ')}`
}

for (const name of names) {
  const res = await analytics(job.id, name)
  const outcome: Outcome = { name, status: res.statusCode }
  if (res.statusCode === 200) {
    outcome.bins = res.json().average_score_by_week
    outcome.etag = String(res.headers.etag)
    const zone = runtimeZone(name)
    if (zone === undefined) failures.push(`${name}: answered, but the runtime knows no such zone`)
    else if (!sameBins(outcome.bins!, reference(zone))) failures.push(await explain(name, zone))
  } else if (res.statusCode === 400) {
    const body = res.json()
    outcome.message = body.details?.find((d: { path: string }) => d.path === 'querystring/tz')?.message
    if (body.code !== 'invalid_request' || typeof body.request_id !== 'string' || outcome.message === undefined) failures.push(`${name}: a 400 not in the error shape: ${res.body}`)
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
t.comment(`figures: time zones: ${answered.length} answered exactly, ${refused.length} refused (${names.length} names, ${screens.length} completions, ${db.kind} database)`)
t.comment(`figures: time zones: of PostgreSQL's ${abbreviations.length} abbreviations ${tally(abbreviations)}; of its ${databaseZones.length} zone names ${tally(databaseZones)}; of the runtime's ${runtimeZones.length} zones ${tally(runtimeZones)}; of ICU's ${ICU_LEGACY.length} legacy IDs ${tally(ICU_LEGACY)}`)
t.comment(`time zones refused: ${refused.map(o => o.name).join(' ')}`)

t.test('every name: a 400 in the error shape, or exactly the weeks of the zone it names', async t => {
  t.same(failures, [], `${names.length} names`)
  t.ok(answered.length > 500 && refused.length > 100, 'both kinds are exercised')
})

t.test('the reference: every name the runtime knows reads the instants as the zone it resolves to', async t => {
  const sample = instants.filter((_, i) => i % 53 === 0)
  const differ = names.filter(name => {
    const zone = runtimeZone(name)
    if (zone === undefined) return false
    const [byName, byZone] = [dayFormat(name), dayFormat(zone)]
    return sample.some(ms => localDay(byName, ms) !== localDay(byZone, ms))
  })
  t.same(differ, [])
})

t.test('ICU legacy IDs are refused, with the zone ICU reads them as where it is one', async t => {
  for (const name of [...ICU_LEGACY, 'ist', 'Ist', 'pst', 'systemv/est5edt']) t.equal(outcomes.get(name)?.status, 400, name)
  for (const [name, zone] of [['IST', 'Asia/Kolkata'], ['ist', 'Asia/Kolkata'], ['PST', 'America/Los_Angeles'], ['NST', 'Pacific/Auckland'], ['AGT', 'America/Argentina/Buenos_Aires'], ['VST', 'Asia/Ho_Chi_Minh']]) {
    t.match(outcomes.get(name!)?.message ?? '', `did you mean ${zone}?`, `${name}: ${zone}`)
  }
  t.match(outcomes.get('IST')?.message, /IANA time zone name.*Europe\/Berlin/, 'the message says which names are accepted')
  t.notMatch(outcomes.get('SystemV/AST4')?.message ?? '', 'did you mean', 'no suggestion that would be a legacy ID too')
})

t.test('every zone of the runtime that PostgreSQL knows is answered, unless their data differ; so are their links and UTC', async t => {
  const known = new Set(databaseZones.map(n => n.toLowerCase()))
  const differing = runtimeZones.filter(n => known.has(n.toLowerCase()) && outcomes.get(n)?.status !== 200)
  for (const name of differing) {
    // Refused only for a reason PostgreSQL confirms, asked directly, against Intl.
    const stated = readDifferently(outcomes.get(name)?.message)
    t.ok(stated !== undefined, `${name}: refused because the readings differ (${outcomes.get(name)?.message})`)
    if (stated === undefined) continue
    const seen = await readingsAt(prisma, name, stated.at)
    t.same(seen, { database: stated.database, runtime: stated.runtime }, `${name} at ${stated.at}: PostgreSQL UTC${stated.database}, Intl UTC${stated.runtime}`)
    t.not(seen.database, seen.runtime)
  }
  t.comment(`time zones read differently by this database and the runtime (tzdata ${process.versions.tz}): ${differing.map(n => `${n} (${Object.values(readDifferently(outcomes.get(n)?.message) ?? {}).join(' ')})`).join(', ') || 'none'}`)
  for (const name of ['UTC', 'utc', 'Etc/UTC', 'GMT', 'Zulu', 'UCT', 'Asia/Calcutta', 'Asia/Kolkata', 'asia/calcutta', 'US/Pacific', 'Etc/GMT+5', 'EtC/gMt+5', 'europe/berlin', 'AMERICA/NEW_YORK']) t.equal(outcomes.get(name)?.status, 200, name)
  for (const name of ['Etc/GMT+13', 'GMT+5', 'UTC+1', 'Z', 'Factory', 'localtime', 'posixrules', 'posix/Europe/Berlin', 'right/Europe/Berlin', 'US/Pacific-New', 'Canada/East-Saskatchewan']) t.equal(outcomes.get(name)?.status, 400, name)
  t.match(outcomes.get('US/Pacific-New')?.message, /not in the database's time-zone data; did you mean America\/Los_Angeles\?/)
})

t.test('the IANA names PostgreSQL would read as abbreviations are answered as their IANA zones', async t => {
  // CET is, in IANA and for Intl, a link to Europe/Brussels: daylight saving in summer,
  // where PostgreSQL's abbreviation is a fixed +01:00. EST is a link to America/Panama.
  for (const [name, zone] of [['CET', 'Europe/Brussels'], ['cet', 'Europe/Brussels'], ['MET', 'Europe/Brussels'], ['EET', 'Europe/Athens'], ['WET', 'Europe/Lisbon'], ['EST', 'America/Panama'], ['MST', 'America/Phoenix'], ['HST', 'Pacific/Honolulu'], ['EST5EDT', 'America/New_York']]) {
    t.equal(outcomes.get(name!)?.status, 200, `${name}`)
    t.same(outcomes.get(name!)?.bins, reference(zone!), `${name} as ${zone}`)
  }
  t.not(JSON.stringify(reference('Europe/Brussels')), JSON.stringify(reference('Etc/GMT-1')), 'which a fixed +01:00 would not give')
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

t.test('the ETag names the zone read: shared by the names of one zone, never by two readings', async t => {
  const etag = (name: string) => outcomes.get(name)!.etag
  t.equal(etag('CET'), etag('Europe/Brussels'), 'CET is read as Europe/Brussels')
  t.equal(etag('Asia/Calcutta'), etag('Asia/Kolkata'))
  t.equal(etag('UTC'), etag('Etc/UTC'))
  // Every answered name: one ETag per zone read, and a zone's ETag names no other zone.
  const zonesByEtag = new Map<string, Set<string>>()
  for (const o of answered) zonesByEtag.set(o.etag!, (zonesByEtag.get(o.etag!) ?? new Set()).add(runtimeZone(o.name)!))
  t.same([...zonesByEtag].filter(([, zones]) => zones.size > 1).map(([, zones]) => [...zones]), [], 'no ETag of two zones')
  t.equal((await analytics(job.id, 'CET', { 'if-none-match': etag('Europe/Brussels')! })).statusCode, 304, 'the same reading: 304')
  t.equal((await analytics(job.id, 'Europe/Paris', { 'if-none-match': etag('Europe/Brussels')! })).statusCode, 200, 'another zone: 200')
  for (const name of ['IST', 'US/Pacific-New']) {
    const res = await analytics(job.id, name, { 'if-none-match': '*' })
    t.equal(res.statusCode, 400, `${name} with If-None-Match: still a 400`)
    t.equal(res.headers.etag, undefined)
  }
})
