import type { Prisma } from '../../src/db/database.js'
import { within } from './until.js'

/**
 * Waits until no transaction older than `xids` (by default: every transaction that has an id
 * now) runs anywhere in the cluster; the oldest running one only ever gets newer. Other test
 * files share the server (tap runs several at once): their transactions would otherwise hold
 * a snapshot's xmin below these, which the fold and the sync tokens treat as unfinished.
 */
export async function untilFinished (prisma: Prisma, xids?: string[]): Promise<void> {
  const [now] = await prisma.$queryRaw<Array<{ next: string }>>`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next`
  const after = xids === undefined ? BigInt(now!.next) - 1n : xids.map(BigInt).reduce((a, b) => (a > b ? a : b))
  const finished = async (): Promise<boolean> => {
    const [row] = await prisma.$queryRaw<Array<{ xmin: string }>>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`
    return BigInt(row!.xmin) > after
  }
  if (!await within(finished, 60_000, 50)) throw new Error(`a transaction older than ${after} still runs after a minute`)
}
