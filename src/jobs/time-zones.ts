// Which `tz` names analytics accepts, and the zone each one is answered in. The runtime (ICU)
// and PostgreSQL must read a name the same way, and they do not always: PostgreSQL reads a
// name in its abbreviation table before its zone database (`IST` = +02:00, `CET` = a fixed
// +01:00), and ICU knows legacy IDs that are no IANA name (`IST` = Asia/Kolkata, `PST`).
// So a name is accepted only if it is an IANA name the runtime knows, and PostgreSQL is
// handed the runtime's own reading of it, a name it cannot take for an abbreviation.

// ICU's IDs that are not IANA names: the three-letter IDs it took from Java and the SystemV
// zones. A closed set, kept by ICU for compatibility; most are abbreviations of several zones.
const ICU_LEGACY = new Set(['act', 'aet', 'agt', 'art', 'ast', 'bet', 'bst', 'cat', 'cnt', 'cst', 'ctt', 'eat', 'ect', 'iet', 'ist', 'jst', 'mit', 'net', 'nst', 'plt', 'pnt', 'prt', 'pst', 'sst', 'vst'])
const isIcuLegacy = (lowerCased: string): boolean => ICU_LEGACY.has(lowerCased) || lowerCased.startsWith('systemv/')

// The runtime names a zone by its CLDR ID, which keeps names IANA has since renamed: a
// suggestion should give the current one.
const IANA_NAME: Record<string, string> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
}

export const ACCEPTED_ZONES = 'an IANA time zone name: Area/Location (Europe/Berlin), a link to one (Asia/Calcutta, US/Pacific, CET), UTC, or Etc/GMT-2 (UTC+02:00); not an offset or an abbreviation'

/**
 * A name's reading: the zone it is answered in (the runtime's canonical ID, which PostgreSQL
 * is handed), or why it is refused (for the 400's message, tzProblem; empty for a name the runtime does
 * not know).
 */
export type ZoneReading = { zone: string } | { refused: string }

/**
 * The runtime's reading of `name`: its canonical zone, or undefined when the runtime does not
 * know it (building the formatter costs about 60 µs, hence the memo in readTimeZone).
 */
function runtimeZone (name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return undefined
  }
}

/**
 * A name PostgreSQL reads as a zone of its zone database, never from its abbreviation table:
 * Area/Location IDs and UTC, whose abbreviation is the zone. Abbreviations are single words
 * (it compares at most their 10 first characters with the name: no abbreviation file has
 * one like "antarctica").
 */
const unmistakable = (zone: string): boolean => zone === 'UTC' || zone.includes('/')

/** "did you mean …?" when the runtime reads `name` as a zone we would accept, else nothing. */
export function suggestionFor (name: string): string {
  const zone = runtimeZone(name)
  if (zone === undefined || isIcuLegacy(zone.toLowerCase()) || !unmistakable(zone)) return ''
  return `; did you mean ${IANA_NAME[zone] ?? zone}?`
}

/**
 * The message of a 400 for `name`: what is accepted, why this name is not, and the zone the
 * runtime reads it as where that is one we accept.
 */
export function tzProblem (name: string, reason: string): { path: string, message: string } {
  // Only a name the runtime knows is quoted: it is short and plain.
  return { path: 'querystring/tz', message: `must be ${ACCEPTED_ZONES}${reason === '' ? '' : `; ${JSON.stringify(name)} ${reason}`}` }
}

// Readings of the names the runtime knows, by lower-cased name: bounded by the runtime's
// list of names whatever callers send (it is case-insensitive, so is the memo).
const readings = new Map<string, ZoneReading>()

/**
 * How analytics reads `name`. Refused: anything not shaped like an IANA name (so fixed
 * offsets and POSIX strings, which PostgreSQL would read with inverted signs), a name the
 * runtime does not know, ICU's legacy IDs, and any name the runtime reads as a zone whose ID
 * PostgreSQL could take for an abbreviation. PostgreSQL must also know the name itself
 * (checked by the query: isUnknownTimeZone).
 */
export function readTimeZone (name: string): ZoneReading {
  if (name.length > 64 || !/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(name)) return { refused: '' }
  const key = name.toLowerCase()
  const known = readings.get(key)
  if (known !== undefined) return known
  const zone = runtimeZone(name)
  if (zone === undefined) return { refused: '' } // not memoized: any string could come
  const reading: ZoneReading = isIcuLegacy(key)
    ? { refused: `is not an IANA name but one of ICU's legacy IDs${key.includes('/') ? '' : ', an abbreviation that means different zones'}${suggestionFor(name)}` }
    : !unmistakable(zone)
        ? { refused: `is read by the runtime as ${zone}, which the database could take for an abbreviation` }
        : { zone }
  readings.set(key, reading)
  return reading
}

/** Whether analytics accepts `name` (see readTimeZone). */
export const isTimeZone = (name: string): boolean => 'zone' in readTimeZone(name)
