// Whether PostgreSQL's time-zone data reads a zone as the runtime's does. Both follow IANA's
// tzdata, each at its own version (Node's ICU, the server's system files, PGlite's own copy),
// and a version can change a zone's rules (a country that stops changing its clocks): the
// service would then answer 200 with the weeks of one version while a client computing with
// the other expects others. A zone whose readings differ is refused.
//
// The comparison is the zone's UTC offset at both ends of every week's boundary window
// (Sunday 10:00 and Monday 11:45 UTC, where every zone's Monday 00:00 lies and where the
// summaries split the weeks) from 1970 to 2050: PostgreSQL computes them in the first
// analytics statement that uses the zone, not in a query of its own, and the runtime once
// per zone (8,452 offsets: 55 to 86 ms measured on a loaded 2-core machine).

import { Prisma as PrismaSql } from '../generated/prisma/client.js'

const FIRST_WINDOW = Date.UTC(1970, 0, 4, 10) // a Sunday 10:00
const LAST_WINDOW = Date.UTC(2050, 11, 25, 10) // a Sunday 10:00
const WEEK = 7 * 86_400_000
const WINDOW_END = (25 * 60 + 45) * 60_000

/** The offsets (seconds east of UTC, comma-separated) PostgreSQL reads for `tz`, instant by instant. */
export const databaseOffsets = (tz: string): PrismaSql.Sql => PrismaSql.sql`(
  SELECT string_agg((extract(epoch FROM (w.t AT TIME ZONE ${tz})) - extract(epoch FROM w.t))::int::text, ',' ORDER BY w.t)
  FROM generate_series(to_timestamp(${FIRST_WINDOW / 1000}::float8), to_timestamp(${LAST_WINDOW / 1000}::float8), interval '7 days') s,
       LATERAL (VALUES (s), (s + interval '25 hours 45 minutes')) w(t))`

const runtimeMemo = new Map<string, string>()

/** The same offsets as the runtime reads them. */
export function runtimeOffsets (tz: string): string {
  const known = runtimeMemo.get(tz)
  if (known !== undefined) return known
  const format = new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'longOffset' })
  const offset = (ms: number): number => {
    const [, sign, h, m, s] = /GMT(?:([+-])(\d\d):(\d\d)(?::(\d\d))?)?$/.exec(format.format(ms)) ?? []
    return sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(h) * 3600 + Number(m) * 60 + Number(s ?? 0))
  }
  const offsets: number[] = []
  for (let w = FIRST_WINDOW; w <= LAST_WINDOW; w += WEEK) offsets.push(offset(w), offset(w + WINDOW_END))
  const text = offsets.join(',')
  runtimeMemo.set(tz, text)
  return text
}

/**
 * The first instant at which the two readings differ, with both offsets, for a message or a
 * log line; undefined when they agree.
 */
export function firstDifference (tz: string, database: string): { at: string, database: number, runtime: number } | undefined {
  const [ours, theirs] = [runtimeOffsets(tz).split(','), database.split(',')]
  const i = ours.findIndex((o, i) => o !== theirs[i])
  if (i === -1 && ours.length === theirs.length) return undefined
  const at = FIRST_WINDOW + Math.floor(i / 2) * WEEK + (i % 2) * WINDOW_END
  return { at: new Date(at).toISOString(), database: Number(theirs[i]), runtime: Number(ours[i]) }
}
