import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError, loadConfig } from '../../src/config.js'
import { configuredZoneRules, PACKAGED_RULES_FILE, readZoneRules, summarizable, zoneRules, zoneTransitions } from '../../src/zones/rules.js'

const require = createRequire(import.meta.url)
const OLDER_FILE = require.resolve('moment-timezone-2025b/data/packed/latest.json')
const packaged = require('moment-timezone/data/packed/latest.json') as { version: string, zones: string[], links: string[] }
const rules = zoneRules()
const at = (iso: string): number => Date.parse(iso) / 1000

t.test('the pinned package\'s rules: its release, every zone and link, an id naming both', async t => {
  t.equal(rules.version, packaged.version)
  t.equal(rules.names().length, packaged.zones.length + packaged.links.length)
  t.match(rules.id, new RegExp(`^${rules.version}-[0-9a-f]{16}$`))
  t.equal(zoneRules(), rules, 'read once')
  t.equal(zoneRules(PACKAGED_RULES_FILE), rules)
})

t.test('at least as new as the runtime\'s tzdata (what Intl reads): the rules are the newest copy in the stack', async t => {
  t.ok(rules.version >= process.versions.tz!, `rules ${rules.version}, Node ${process.versions.node} tzdata ${process.versions.tz}`)
})

t.test('a zone\'s transitions: from 1900, only those that change the offset, in whole seconds', async t => {
  const berlin = rules.transitionsOf('Europe/Berlin')!
  t.equal(berlin.offsets.length, berlin.transitions.length + 1)
  t.ok(berlin.transitions.every((s, i) => Number.isInteger(s) && (i === 0 || s > berlin.transitions[i - 1]!)), 'ascending whole seconds')
  t.ok(berlin.transitions[0]! >= at('1900-01-01T00:00:00Z'))
  t.ok(berlin.offsets.every((o, i) => i === 0 || o !== berlin.offsets[i - 1]), 'each one changes the offset')
  t.same(rules.transitionsOf('Etc/UTC'), { transitions: [], offsets: [0] })
  // 2026f: Vancouver keeps daylight time from 2026-11-01 on.
  const vancouver = rules.transitionsOf('America/Vancouver')!
  t.equal(vancouver.transitions.at(-1), at('2026-03-08T10:00:00Z'))
  t.equal(vancouver.offsets.at(-1), -7 * 3600)
  t.same(zoneTransitions({ offsets: [-30, 60, 60, 0], untils: [Date.UTC(1850, 0), Date.UTC(1950, 0), Date.UTC(1960, 0), Infinity] }),
    { transitions: [at('1960-01-01T00:00:00Z')], offsets: [-3600, 0] }, 'before 1900 and an abbreviation\'s change dropped')
})

t.test('summarizable: offsets and changes the summaries can place exactly, since 1980', async t => {
  t.same(rules.names().filter(name => !rules.summarizable(rules.zoneOf(name)!)), [], `every zone of ${rules.version}`)
  const older = readZoneRules(OLDER_FILE)
  t.same(older.names().filter(name => !older.summarizable(older.zoneOf(name)!)), [], `every zone of ${older.version}`)
  const sunday10 = at('2026-03-08T10:00:00Z') // a Sunday 10:00 UTC: a boundary window's start
  t.ok(summarizable({ transitions: [sunday10 + 3600], offsets: [-28800, -25200] }), 'a change inside a window, on a quarter hour')
  t.notOk(summarizable({ transitions: [sunday10 + 3600 + 60], offsets: [-28800, -25200] }), 'a change inside a window, off a quarter hour')
  t.ok(summarizable({ transitions: [sunday10 - 3600 + 60], offsets: [-28800, -25200] }), 'off a quarter hour but outside any window')
  t.notOk(summarizable({ transitions: [at('1990-01-01T00:00:00Z')], offsets: [3600, 5 * 3600 + 20 * 60] }), 'an offset of +05:20 since 1980')
  t.ok(summarizable({ transitions: [at('1970-01-01T00:00:00Z')], offsets: [5 * 3600 + 20 * 60, 3600] }), '+05:20 before 1980 only')
  t.notOk(summarizable({ transitions: [], offsets: [-13 * 3600] }), 'UTC-13:00')
  t.notOk(summarizable({ transitions: [], offsets: [15 * 3600] }), 'UTC+15:00')
})

t.test('another release from its file: its own version, id and rules', async t => {
  const older = readZoneRules(OLDER_FILE)
  t.equal(older.version, '2025b')
  t.not(older.id, rules.id)
  t.equal(older.transitionsOf('America/Vancouver')!.offsets.at(-1), -8 * 3600, '2025b: standard time in winter')
})

t.test('a file that is not packed zone data is a configuration error naming ZONE_RULES_FILE', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'zone-rules-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const bad = join(dir, 'bad.json')
  await writeFile(bad, '{"zones": 3}')
  t.throws(() => readZoneRules(bad), /not a moment-timezone packed data file/)
  t.throws(() => configuredZoneRules(loadConfig({ ZONE_RULES_FILE: bad })), /^Invalid configuration:\n {2}ZONE_RULES_FILE="[^"]+bad.json": .*not a moment-timezone packed data file/)
  t.ok((() => { try { configuredZoneRules(loadConfig({ ZONE_RULES_FILE: bad })) } catch (error) { return error instanceof ConfigError } })(), 'a ConfigError: the server prints its message alone')
  t.throws(() => configuredZoneRules(loadConfig({ ZONE_RULES_FILE: join(dir, 'missing.json') })), /ZONE_RULES_FILE="[^"]+missing.json": ENOENT/)
  t.equal(configuredZoneRules(loadConfig({})), rules)
})
