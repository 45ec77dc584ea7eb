import type { ZoneRules } from './rules.js'

// Which `tz` names analytics accepts: every zone and link of the service's zone rules
// (rules.ts), case-insensitively, each answered as the zone it names. Everything else is
// refused with a 400: abbreviations (PostgreSQL's `IST` is +02:00, ICU's is Asia/Kolkata),
// ICU's legacy IDs, offsets and POSIX strings, names IANA has dropped, unknown names. Where
// one is obvious, the refusal suggests the zone meant, as the runtime (ICU) reads the name:
// a suggestion only, never an answer.

// ICU's IDs that are not IANA names: the three-letter IDs it took from Java and the SystemV
// zones. A closed set, kept by ICU for compatibility; most are abbreviations of several zones.
const ICU_LEGACY = new Set(['act', 'aet', 'agt', 'art', 'ast', 'bet', 'bst', 'cat', 'cnt', 'cst', 'ctt', 'eat', 'ect', 'iet', 'ist', 'jst', 'mit', 'net', 'nst', 'plt', 'pnt', 'prt', 'pst', 'sst', 'vst'])
const isIcuLegacy = (lowerCased: string): boolean => ICU_LEGACY.has(lowerCased) || lowerCased.startsWith('systemv/')

export const ACCEPTED_ZONES = 'an IANA time zone name: Area/Location (Europe/Berlin), a link to one (Asia/Calcutta, US/Pacific, CET), UTC, or Etc/GMT-2 (UTC+02:00); not an offset or an abbreviation'

/** A name's reading: the zone it is answered in, or why it is refused (for the 400's message, tzProblem). */
export type ZoneReading = { zone: string } | { refused: string }

/** The runtime's reading of `name` (ICU's canonical ID), or undefined when it knows none. */
function runtimeZone (name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return undefined
  }
}

/**
 * "; did you mean …?" when the runtime reads `name` as a zone the rules know (ICU keeps names
 * IANA renamed or dropped, and legacy IDs: the suggestion is the rules' zone), else ''.
 */
function suggestionFor (name: string, rules: ZoneRules): string {
  const read = runtimeZone(name)
  const zone = read === undefined || isIcuLegacy(read.toLowerCase()) ? undefined : rules.zoneOf(read)
  return zone === undefined ? '' : `; did you mean ${zone}?`
}

/** The message of a 400 for `name`: what is accepted, and why this name is not. */
export function tzProblem (name: string, reason: string): { path: string, message: string } {
  // Only a name of IANA's shape is quoted: it is short and plain.
  return { path: 'querystring/tz', message: `must be ${ACCEPTED_ZONES}${reason === '' ? '' : `; ${JSON.stringify(name)} ${reason}`}` }
}

// The shape of every IANA name (and of what ICU knows); anything else is refused unread.
const SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/

// Readings by lower-cased name, per rules: bounded by the names the rules or the runtime know,
// whatever callers send.
const readings = new WeakMap<ZoneRules, Map<string, ZoneReading>>()

/** How analytics reads `name` with `rules`: the zone it names, or why it is refused. */
export function readTimeZone (name: string, rules: ZoneRules): ZoneReading {
  if (name.length > 64 || !SHAPE.test(name)) return { refused: '' }
  const key = name.toLowerCase()
  let memo = readings.get(rules)
  if (memo === undefined) readings.set(rules, memo = new Map())
  const known = memo.get(key)
  if (known !== undefined) return known
  const zone = rules.zoneOf(name)
  let reading: ZoneReading
  if (zone !== undefined) reading = { zone }
  else if (runtimeZone(name) === undefined) return { refused: '' } // not memoized: any string could come
  else if (isIcuLegacy(key)) reading = { refused: `is not an IANA name but one of ICU's legacy IDs${key.includes('/') ? '' : ', an abbreviation that means different zones'}${suggestionFor(name, rules)}` }
  else reading = { refused: `is not a zone or link of tzdata ${rules.version}${suggestionFor(name, rules)}` }
  memo.set(key, reading)
  return reading
}
