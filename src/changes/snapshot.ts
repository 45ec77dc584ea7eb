// PostgreSQL snapshots (pg_snapshot's text form `xmin:xmax:xip,…`) as a sync token's point.
// A transaction is visible in a snapshot when it is below xmax and not listed as in
// progress; a token's point is what every page of a walk could see, so the next sync
// reports every change some page might have missed. docs/sync-design.md.

export interface Snapshot { xmin: bigint, xmax: bigint, xip: bigint[] }

/** In-progress transactions a token keeps at most: beyond, xmax is lowered (see bounded). */
export const MAX_IN_PROGRESS = 6

const FORM = /^(\d{1,20}):(\d{1,20}):((?:\d{1,20}(?:,\d{1,20})*)?)$/

/** The snapshot a text names, or undefined when it is not one PostgreSQL would accept. */
export function parseSnapshot (text: string): Snapshot | undefined {
  const match = FORM.exec(text)
  if (match === null) return undefined
  const xmin = BigInt(match[1]!)
  const xmax = BigInt(match[2]!)
  const xip = match[3] === '' ? [] : match[3]!.split(',').map(BigInt)
  if (xmin > xmax || xmin < 1n) return undefined
  for (let i = 0; i < xip.length; i++) {
    if (xip[i]! < xmin || xip[i]! >= xmax || (i > 0 && xip[i]! <= xip[i - 1]!)) return undefined
  }
  return { xmin, xmax, xip }
}

export const snapshotText = ({ xmin, xmax, xip }: Snapshot): string => `${xmin}:${xmax}:${xip.join(',')}`

const min = (a: bigint, b: bigint): bigint => a < b ? a : b

/**
 * A snapshot in which a transaction is visible exactly when it is visible in both: the
 * lower xmin and xmax, and every transaction either lists as in progress below that xmax.
 */
export function intersect (a: Snapshot, b: Snapshot): Snapshot {
  const xmax = min(a.xmax, b.xmax)
  const xip = [...new Set([...a.xip, ...b.xip])].filter(x => x < xmax).sort((x, y) => x < y ? -1 : x > y ? 1 : 0)
  return { xmin: min(a.xmin, b.xmin), xmax, xip }
}

/**
 * At most MAX_IN_PROGRESS listed transactions, so that a token stays short whatever the
 * number of writers: xmax is lowered to the first one dropped, so that it and every later
 * transaction count as not visible. Conservative: the next sync reports more, never less.
 */
export function bounded (snapshot: Snapshot): Snapshot {
  if (snapshot.xip.length <= MAX_IN_PROGRESS) return snapshot
  return { xmin: snapshot.xmin, xmax: snapshot.xip[MAX_IN_PROGRESS]!, xip: snapshot.xip.slice(0, MAX_IN_PROGRESS) }
}
