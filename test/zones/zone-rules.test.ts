import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LocalDate, LocalDateTime, LocalTime, ZonedDateTime, ZoneId } from '@js-joda/core'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { foldScreenStats } from '../../src/admin/screen-stats.js'
import { loadConfig } from '../../src/config.js'
import { readZoneRules, zoneRules } from '../../src/zones/rules.js'
import { ZoneRulesStore } from '../../src/zones/store.js'
import { apiDatabase, buildTestApp } from '../helpers/app.js'
import { createJob, createScreens, createTenant, type ScreenInput } from '../helpers/fixtures.js'
import { zoneReference, type ZoneReference } from '../helpers/zone-reference.js'
import { clientReader } from '../../src/db/sql-reader.js'

// The zone rules an instance answers with are its own (src/zones/): the pinned package's by
// default, another release when ZONE_RULES_FILE names one (how an operator moves to newer
// rules without a new database: docs/operations.md). Two instances on two releases, as in a
// rolling upgrade, share a database: each answers by its rules, names them in
// `Tzdata-Version`, and never gives an ETag that the other would answer with a 304.

const require = createRequire(import.meta.url)
const OLDER_FILE = require.resolve('moment-timezone-2025b/data/packed/latest.json') // moment-timezone 0.6.0: tzdata 2025b
const current = zoneRules()
const older = readZoneRules(OLDER_FILE)

const { app, prisma, db, config } = await buildTestApp(t, { env: { RATE_LIMIT_MAX: '100000', SUMMARY_FOLD_INTERVAL_MS: '0' } })
const olderConfig = loadConfig({ ...Object.fromEntries(Object.entries(config).map(([k, v]) => [k, String(v)])), ZONE_RULES_FILE: OLDER_FILE })
const olderApp = await buildApp({ config: olderConfig, database: apiDatabase(db, olderConfig) })
t.teardown(async () => { await olderApp.close() })
await olderApp.ready()

const pro = await createTenant(prisma, { plan: 'pro' })

/** Each local Monday 00:00 of `zone` from `first` on, by `reference`'s rules, and one second before. */
function mondays (reference: ZoneReference, zone: string, first: string, weeks: number): number[] {
  reference.mondayOf(0, zone) // loads the reference's release into js-joda
  const out: number[] = []
  for (let i = 0, monday = LocalDate.parse(first); i < weeks; i++, monday = monday.plusWeeks(1)) {
    const start = ZonedDateTime.of(LocalDateTime.of(monday, LocalTime.MIDNIGHT), ZoneId.of(zone)).toInstant().toEpochMilli()
    out.push(start - 1000, start)
  }
  return out
}
const completions = (instants: number[]): ScreenInput[] => instants.map((ms, i) => ({ status: 'completed', score: i % 5 === 0 ? null : 50 + (i % 41), completedAt: new Date(ms) }))
function bins (reference: ZoneReference, zone: string, of: ScreenInput[]): Array<{ week: string, count: number }> {
  const byWeek = new Map<string, number>()
  for (const s of of) { const week = reference.mondayOf(s.completedAt!.getTime(), zone); byWeek.set(week, (byWeek.get(week) ?? 0) + 1) }
  return [...byWeek].sort(([a], [b]) => a.localeCompare(b)).map(([week, count]) => ({ week, count }))
}
const counts = (body: { average_score_by_week: Array<{ week: string, count: number }> }) => body.average_score_by_week.map(({ week, count }) => ({ week, count }))

t.test('two instances on two tzdata releases: each by its own rules, named in the header and the ETag', async t => {
  const [now, then] = [zoneReference(), zoneReference(OLDER_FILE)]
  const job = await createJob(prisma, pro)
  // Vancouver's local Mondays from October 2026 to January 2027 by both releases: 2026f keeps
  // daylight time from 2026-11-01, 2025b does not, so an hour of each Monday differs.
  const screens = completions([...mondays(now, 'America/Vancouver', '2026-10-05', 16), ...mondays(then, 'America/Vancouver', '2026-10-05', 16)])
  await createScreens(prisma, job.id, screens)
  const url = `/api/jobs/${job.id}/analytics?tz=Canada/Pacific`
  const [a, b] = [await app.inject({ url, headers: pro.auth }), await olderApp.inject({ url, headers: pro.auth })]
  t.equal(a.statusCode, 200)
  t.equal(b.statusCode, 200)
  t.equal(a.headers['tzdata-version'], current.version)
  t.equal(b.headers['tzdata-version'], '2025b')
  t.same(counts(a.json()), bins(now, 'America/Vancouver', screens), `${current.version}'s weeks`)
  t.same(counts(b.json()), bins(then, 'America/Vancouver', screens), '2025b\'s weeks')
  t.not(JSON.stringify(counts(a.json())), JSON.stringify(counts(b.json())), 'which differ')
  t.not(a.headers.etag, b.headers.etag, 'two answers, two ETags')
  // Polling through a load balancer that alternates between them: never a 304 for the other's answer.
  t.equal((await olderApp.inject({ url, headers: { ...pro.auth, 'if-none-match': String(a.headers.etag) } })).statusCode, 200)
  t.equal((await app.inject({ url, headers: { ...pro.auth, 'if-none-match': String(b.headers.etag) } })).statusCode, 200)
  const same = await olderApp.inject({ url, headers: { ...pro.auth, 'if-none-match': String(b.headers.etag) } })
  t.equal(same.statusCode, 304, 'its own ETag: 304')
  t.equal(same.headers['tzdata-version'], '2025b')
  // Zones whose rules did not change between the releases: the same weeks, still another ETag.
  const berlin = `/api/jobs/${job.id}/analytics?tz=Europe/Berlin`
  const [c, d] = [await app.inject({ url: berlin, headers: pro.auth }), await olderApp.inject({ url: berlin, headers: pro.auth })]
  t.equal(c.body, d.body)
  t.not(c.headers.etag, d.headers.etag)
  const sets = await prisma.$queryRaw<Array<{ id: string, version: string }>>`SELECT id, version FROM zone_rule_sets ORDER BY version`
  t.same(sets, [{ id: older.id, version: '2025b' }, { id: current.id, version: current.version }], 'both sets stored, each under its own id (the older one by its instance, as the API\'s role on a server)')
})

t.test('a zone whose offsets the summaries cannot place is answered from the screens, exactly, whatever the job\'s size', async t => {
  // A release in which a zone moves to UTC+05:20 in 1990 (no zone has done that since 1980):
  // its Monday 00:00 falls inside a quarter hour of the boundary windows.
  const dir = await mkdtemp(join(tmpdir(), 'zone-rules-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const { tz: { pack } } = require('moment-timezone/moment-timezone-utils.js') as { tz: { pack: (zone: object) => string } }
  const packed = JSON.parse(await readFile(OLDER_FILE, 'utf8')) as { version: string, zones: string[] }
  packed.version = '2025b-odd'
  packed.zones.push(pack({ name: 'Test/Odd_Offset', abbrs: ['A', 'B'], offsets: [-330, -320], untils: [Date.UTC(1990, 0, 1), Infinity], population: 0 }))
  const file = join(dir, 'odd.json')
  await writeFile(file, JSON.stringify(packed))
  const odd = readZoneRules(file)
  t.notOk(odd.summarizable('Test/Odd_Offset'))
  t.ok(odd.summarizable('Europe/Berlin'))

  const oddConfig = loadConfig({ ...Object.fromEntries(Object.entries(config).map(([k, v]) => [k, String(v)])), ZONE_RULES_FILE: file, ANALYTICS_SCREENS_READ_MAX: '0' })
  const oddApp = await buildApp({ config: oddConfig, database: apiDatabase(db, oddConfig) })
  t.teardown(async () => { await oddApp.close() })
  const reference = zoneReference(file)
  const job = await createJob(prisma, pro)
  const screens = completions(mondays(reference, 'Test/Odd_Offset', '2025-01-06', 300))
  await createScreens(prisma, job.id, screens)
  await foldScreenStats(prisma)
  const res = await oddApp.inject({ url: `/api/jobs/${job.id}/analytics?tz=test/odd_offset`, headers: pro.auth })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['tzdata-version'], '2025b-odd')
  t.same(counts(res.json()), bins(reference, 'Test/Odd_Offset', screens), '600 completions at and just before each local Monday 00:00, each in its week')
  t.same(counts(res.json()).map(b => b.count), [1, ...Array(299).fill(2), 1])

  // A completion moved within its quarter hour across the zone's Monday 00:00 (Sunday 18:40
  // UTC): the summaries' version stays, the answer must move (no answer is kept in such a zone).
  const moved = await createJob(prisma, pro)
  await createScreens(prisma, moved.id, [{ status: 'completed', score: 5, completedAt: new Date(Date.UTC(2026, 2, 1, 18, 35)) }])
  const weeks = async (): Promise<string[]> => ((await oddApp.inject({ url: `/api/jobs/${moved.id}/analytics?tz=test/odd_offset`, headers: pro.auth })).json() as { average_score_by_week: Array<{ week: string }> }).average_score_by_week.map(b => b.week)
  t.same(await weeks(), ['2026-02-23'], 'Sunday 23:55 local')
  await prisma.screen.updateMany({ where: { jobId: moved.id }, data: { completedAt: new Date(Date.UTC(2026, 2, 1, 18, 42)) } })
  t.same(await weeks(), ['2026-03-02'], 'Monday 00:02 local: the next week')
})

t.test('rules gone from the database: a 503, and stored again by the next request', async t => {
  const job = await createJob(prisma, pro)
  await createScreens(prisma, job.id, [{ status: 'completed', score: 1, completedAt: new Date(Date.UTC(2026, 0, 5, 12)) }])
  const url = `/api/jobs/${job.id}/analytics?tz=Asia/Kathmandu`
  t.equal((await app.inject({ url, headers: pro.auth })).statusCode, 200)
  await prisma.$executeRaw`DELETE FROM zone_rule_sets WHERE id = ${current.id}`
  const gone = await app.inject({ url, headers: pro.auth })
  t.equal(gone.statusCode, 503)
  t.equal(gone.json().code, 'unavailable')
  t.equal(gone.headers['tzdata-version'], undefined)
  const back = await app.inject({ url, headers: pro.auth })
  t.equal(back.statusCode, 200)
  t.same(back.json().average_score_by_week, [{ week: '2026-01-05', count: 1, average_score: 1 }])
  const zones = new Set(current.names().map(name => current.zoneOf(name))).size
  t.equal((await prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM zone_rules WHERE rule_set = ${current.id}`)[0]!.n, zones, `every zone (${zones})`)
})

t.test('old rule sets pruned: a set no instance has marked in use for a day is deleted, one marked within the day is kept (issue 40, part 5)', async t => {
  const job = await createJob(prisma, pro)
  await createScreens(prisma, job.id, [{ status: 'completed', score: 7, completedAt: new Date(Date.UTC(2026, 0, 5, 12)) }])
  const url = `/api/jobs/${job.id}/analytics?tz=Europe/Berlin`
  const sets = async (): Promise<string[]> => (await prisma.zoneRuleSet.findMany({ select: { id: true }, orderBy: { id: 'asc' } })).map(s => s.id)
  t.ok((await sets()).includes(older.id) && (await sets()).includes(current.id), 'both instances\' sets are stored')
  // The older instance (and the odd rules' of an earlier test) stopped a day and an hour ago,
  // their last mark then; a set of a release some instance marked 23 hours ago is in use.
  await prisma.$executeRaw`INSERT INTO zone_rule_sets (id, version, used_at) VALUES ('2099z-0000000000000000', '2099z', now() - interval '23 hours')`
  await prisma.$executeRaw`UPDATE zone_rule_sets SET used_at = now() - interval '25 hours' WHERE id <> ${current.id} AND version <> '2099z'`
  await olderApp.close()
  // The running instance's mark, as its timer makes it (every 10 minutes).
  const store = new ZoneRulesStore(clientReader(prisma), current)
  await store.keep()
  t.same(await sets(), ['2099z-0000000000000000', current.id].sort(), 'the set unused for a day went; the one used 23 hours ago stayed')
  t.equal((await prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM zone_rules WHERE rule_set = ${older.id}`)[0]!.n, 0, 'with its zones')
  t.equal((await app.inject({ url, headers: pro.auth })).statusCode, 200, 'the running instance answers as before')
  await prisma.$executeRaw`DELETE FROM zone_rule_sets WHERE id = ${current.id}`
  await store.keep()
  t.ok((await sets()).includes(current.id), 'a running instance\'s set deleted all the same: its next mark stores it again')

  // An instance that comes back after its set was deleted stores it again at start.
  const backConfig = loadConfig({ ...Object.fromEntries(Object.entries(config).map(([k, v]) => [k, String(v)])), ZONE_RULES_FILE: OLDER_FILE })
  const back = await buildApp({ config: backConfig, database: apiDatabase(db, backConfig) })
  t.teardown(async () => { await back.close() })
  await back.ready()
  t.same(await sets(), ['2099z-0000000000000000', older.id, current.id].sort(), 'an instance of the older release, started again, stored its set again')
  t.equal((await back.inject({ url, headers: pro.auth })).headers['tzdata-version'], '2025b')
})
