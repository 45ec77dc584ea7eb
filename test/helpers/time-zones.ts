import type { Prisma } from '../../src/db/database.js'

// A zone that the database's time-zone data and the runtime's read differently (their tzdata
// versions differ) is refused by analytics with a 400 that names the first instant and both
// offsets (src/jobs/zone-agreement.ts). Tests that draw zones at random accept that 400 only
// when it is true: PostgreSQL and Intl, asked directly here, read that instant as it says.

const DIFFER = /which the database's time-zone data and the service's read differently \(at (\S+): UTC(\S+) and UTC(\S+);/

/** Seconds east of UTC as ±HH:MM[:SS], as the service's message writes them. */
export function offsetText (seconds: number): string {
  const a = Math.abs(seconds)
  const [h, m, s] = [Math.floor(a / 3600), Math.floor(a / 60) % 60, a % 60].map(n => String(n).padStart(2, '0'))
  return `${seconds < 0 ? '-' : '+'}${h}:${m}${s === '00' ? '' : `:${s}`}`
}

export interface ReadDifferently { at: string, database: string, runtime: string }

/** The instant and the two offsets of such a 400's message, or undefined for any other message. */
export function readDifferently (message: string | undefined): ReadDifferently | undefined {
  const [, at, database, runtime] = DIFFER.exec(message ?? '') ?? []
  return at === undefined ? undefined : { at, database: database!, runtime: runtime! }
}

/** Both readings of `zone` at `at`, PostgreSQL's and Intl's, as ±HH:MM[:SS]. */
export async function readingsAt (prisma: Prisma, zone: string, at: string): Promise<{ database: string, runtime: string }> {
  const rows = await prisma.$queryRawUnsafe<Array<{ offset: number }>>('SELECT (extract(epoch FROM ($1::timestamptz AT TIME ZONE $2)) - extract(epoch FROM $1::timestamptz))::int AS "offset"', at, zone)
  const runtime = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }).format(new Date(at)).replace(/.*GMT/, '')
  return { database: offsetText(rows[0]!.offset), runtime: runtime === '' ? '+00:00' : runtime }
}

/** Whether a response is that 400 for `zone`, and the two readings really differ there. */
export async function refusedAsReadDifferently (prisma: Prisma, zone: string, res: { statusCode: number, json: () => { details?: Array<{ path: string, message: string }> } }): Promise<boolean> {
  if (res.statusCode !== 400) return false
  const stated = readDifferently(res.json().details?.find(d => d.path === 'querystring/tz')?.message)
  if (stated === undefined) return false
  const seen = await readingsAt(prisma, zone, stated.at)
  return seen.database === stated.database && seen.runtime === stated.runtime && seen.database !== seen.runtime
}
