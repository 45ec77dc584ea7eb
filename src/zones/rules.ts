import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { ConfigError, type Config } from '../config.js'

// The zone rules every analytics answer is computed with: one tzdata release, from the
// `moment-timezone` package pinned in package.json (its data file, IANA's tzdata compiled to
// transitions) or from the file ZONE_RULES_FILE names. Neither the runtime's ICU nor the
// database's tzdata is asked: each carries its own release (Node 20 2025c, Node 24 2026c,
// Debian's PostgreSQL 2025b), and an answer must not depend on which of them it ran on
// (docs/decisions.md, "Zone rules"). The database gets the rules as data (zones/store.ts)
// and computes local weeks from them (migration 20261126120000_zone_rules).

const require = createRequire(import.meta.url)
// The package's core, without the data its entry point loads into its own registry: only
// its unpacker is used, on whichever file is configured.
const momentTz = require('moment-timezone/moment-timezone.js') as typeof import('moment-timezone')

/** The data file of the pinned package: moment-timezone's packed format. */
export const PACKAGED_RULES_FILE = require.resolve('moment-timezone/data/packed/latest.json')

interface PackedData { version: string, zones: string[], links: string[] }

/** One zone's rules from 1900 to 3000: the instants its UTC offset changes, and the offsets. */
export interface ZoneTransitions {
  /** Epoch seconds, ascending; each one changes the offset. */
  transitions: number[]
  /** Seconds east of UTC: offsets[0] before transitions[0], offsets[i + 1] from transitions[i]. */
  offsets: number[]
}

export interface ZoneRules {
  /** The tzdata release, as the file names it (`2026f`). */
  version: string
  /** What identifies these rules in the database and in ETags: the version and a hash of the rules. */
  id: string
  /** The rules as the database loads them (load_zone_rules): JSON text whose hash is part of `id`. */
  text: string
  /** The zone (a link's target) a name stands for, case-insensitively; undefined for a name that is none. */
  zoneOf: (name: string) => string | undefined
  /** Whether the summaries can answer this zone's weeks exactly (see summarizable). */
  summarizable: (zone: string) => boolean
  /** Every zone and link, as IANA spells them. */
  names: () => string[]
  /** A zone's transitions and offsets. */
  transitionsOf: (zone: string) => ZoneTransitions | undefined
}

// Completion times are from 1900 on (screens_completed_at_placeable): the offset in force at
// 1900 is all that is kept of what came before.
const FROM = Date.UTC(1900, 0, 1)

/** A zone's offsets and transitions from 1900 on, with the changes that keep the offset (an abbreviation's) dropped. */
export function zoneTransitions (zone: { offsets: number[], untils: number[] }): ZoneTransitions {
  // moment-timezone: offsets[i], in minutes west of UTC, holds until untils[i] (ms; the last is Infinity).
  const east = (i: number): number => Math.round(-zone.offsets[i]! * 60)
  let i = zone.untils.findIndex(until => until > FROM)
  const offsets = [east(i)]
  const transitions: number[] = []
  for (; Number.isFinite(zone.untils[i]) && i + 1 < zone.offsets.length; i++) {
    const next = east(i + 1)
    if (next === offsets.at(-1)) continue
    transitions.push(zone.untils[i]! / 1000)
    offsets.push(next)
  }
  return { transitions, offsets }
}

// Completion times end before 3000 (screens_completed_at_placeable), and so do the weeks a
// caller may ask for; moment-timezone's data ends in 2499. Past it, a zone keeps its last
// rule (IANA's rules are yearly, "last Sunday of March"), and the Gregorian calendar repeats
// every 400 years, which are a whole number of weeks: a zone whose changes reach the data's
// last year changes at the same instants plus 400 years, 800 years. The copied years are
// 2100 to 2499, after every rule change tzdata schedules (Morocco's end in 2087); a data file
// that ends earlier cannot be extended so and is refused (docs/decisions.md, "Zone rules").
const UNTIL = Date.UTC(3000, 0, 1) / 1000
const CYCLE = 146_097 * 86_400
const COPIED_FROM = Date.UTC(2100, 0, 1) / 1000
const DATA_MUST_REACH = 2499

/**
 * `zone` extended to the year 3000 by its last 400 years of changes (every one's offsets as
 * there); unchanged when its changes end before `dataEnd`, the year the file's data ends in.
 */
export function extendToYear3000 (zone: ZoneTransitions, dataEnd: number): ZoneTransitions {
  const last = zone.transitions.at(-1)
  if (last === undefined || new Date(last * 1000).getUTCFullYear() < dataEnd) return zone
  const transitions = [...zone.transitions]
  const offsets = [...zone.offsets]
  for (let k = transitions.findIndex(t => t >= COPIED_FROM); k >= 0 && transitions[k]! + CYCLE < UNTIL; k++) {
    const copy = transitions[k]! + CYCLE
    if (copy <= transitions.at(-1)!) continue
    // The offset before the copy must be the one before its original: the rules repeat.
    if (offsets.at(-1) !== offsets[k]) throw new Error(`the changes of a zone do not repeat after 400 years at ${new Date(copy * 1000).toISOString()}`)
    transitions.push(copy)
    offsets.push(offsets[k + 1]!)
  }
  return { transitions, offsets }
}

// The summaries (docs/summaries-design.md) keep completions since 1980 by UTC segment (Monday
// 12:00 to Sunday 10:00) and by quarter hour in each boundary window (Sunday 10:00 to Monday
// 12:00). A zone's weeks can be read from them exactly when, since 1980, its offsets stay
// within -12:00 and +14:00 (a segment is inside one local week) and are whole quarter hours,
// and every change of offset inside a window falls on a quarter hour (no quarter is cut by
// a local Monday 00:00). Every zone of tzdata 2026f passes; a zone that does not is answered
// from its job's screens (the route's choice), exact whatever the job's size costs.
const SINCE = Date.UTC(1980, 0, 1) / 1000
const WINDOW_START = Date.UTC(2000, 0, 2, 10) / 1000 // a Sunday 10:00 UTC
const WEEK = 7 * 86_400
const WINDOW = 26 * 3600

export function summarizable ({ transitions, offsets }: ZoneTransitions): boolean {
  const fits = (offset: number): boolean => offset % 900 === 0 && offset >= -43_200 && offset <= 50_400
  return offsets.every((offset, i) => i < transitions.length && transitions[i]! <= SINCE ? true : fits(offset)) &&
    transitions.every(t => t < SINCE || (((t - WINDOW_START) % WEEK) + WEEK) % WEEK >= WINDOW || t % 900 === 0)
}

/** The rules in a file of moment-timezone's packed format (`data/packed/latest.json` of any release). */
export function readZoneRules (file: string): ZoneRules {
  const packed = JSON.parse(readFileSync(file, 'utf8')) as PackedData
  if (typeof packed.version !== 'string' || !Array.isArray(packed.zones) || !Array.isArray(packed.links)) {
    throw new Error(`${file}: not a moment-timezone packed data file (version, zones, links)`)
  }
  const zones = new Map<string, ZoneTransitions>()
  for (const entry of packed.zones) {
    const zone = momentTz.tz.unpack(entry)
    zones.set(zone.name, zoneTransitions(zone))
  }
  const dataEnd = Math.max(...[...zones.values()].map(z => new Date((z.transitions.at(-1) ?? 0) * 1000).getUTCFullYear()))
  if (dataEnd < DATA_MUST_REACH) throw new Error(`${file}: its rules end in ${dataEnd}; completions until 3000 need them to ${DATA_MUST_REACH} at least`)
  for (const [name, zone] of zones) {
    try {
      zones.set(name, extendToYear3000(zone, dataEnd))
    } catch (error) {
      throw new Error(`${file}: ${name}: ${(error as Error).message}`)
    }
  }
  // Names by lower case: IANA's names differ in more than case, and callers' spellings vary.
  const byName = new Map<string, string>()
  const spelled = new Map<string, string>()
  for (const zone of zones.keys()) { byName.set(zone.toLowerCase(), zone); spelled.set(zone.toLowerCase(), zone) }
  const links = new Map(packed.links.map(link => { const [target, name] = link.split('|') as [string, string]; return [name, target] }))
  for (const [name, target] of links) {
    let zone = target
    for (let hops = 0; !zones.has(zone) && links.has(zone) && hops < 10; hops++) zone = links.get(zone)!
    if (!zones.has(zone)) throw new Error(`${file}: the link ${name} leads to no zone (${target})`)
    byName.set(name.toLowerCase(), zone)
    spelled.set(name.toLowerCase(), name)
  }
  const text = JSON.stringify({ version: packed.version, zones: Object.fromEntries([...zones].map(([zone, z]) => [zone, [z.transitions, z.offsets]])) })
  const fit = new Map([...zones].map(([zone, z]) => [zone, summarizable(z)]))
  return {
    version: packed.version,
    id: `${packed.version}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`,
    text,
    zoneOf: name => byName.get(name.toLowerCase()),
    summarizable: zone => fit.get(zone) ?? false,
    names: () => [...spelled.values()].sort(),
    transitionsOf: zone => zones.get(zone),
  }
}

const loaded = new Map<string, ZoneRules>()

/** The rules of `file` (default: the pinned package's), read once per process. */
export function zoneRules (file: string = PACKAGED_RULES_FILE): ZoneRules {
  let rules = loaded.get(file)
  if (rules === undefined) loaded.set(file, rules = readZoneRules(file))
  return rules
}

/** The zone rules the configuration names (ZONE_RULES_FILE, or the pinned package's); a bad file is a configuration error. */
export function configuredZoneRules (config: Config): ZoneRules {
  try {
    return zoneRules(config.ZONE_RULES_FILE)
  } catch (error) {
    throw new ConfigError(`Invalid configuration:\n  ZONE_RULES_FILE=${JSON.stringify(config.ZONE_RULES_FILE)}: ${(error as Error).message}`)
  }
}
