import type { Prisma } from '../db/database.js'

/**
 * Makes every sync token made so far answer 410 `sync_token_expired`, so that partners walk
 * again. For when the database went back in time: a restore from a backup, or a failover
 * that lost transactions the old primary had committed (asynchronous replication). Their
 * changes are gone from the log too, and their transaction ids will be handed out again, so
 * a token made before cannot be answered exactly. Moves the change log's horizon to the next
 * transaction id; returns it.
 */
export async function expireSyncTokens (prisma: Prisma): Promise<{ horizon: string }> {
  const [row] = await prisma.$queryRaw<Array<{ horizon: string }>>`
    UPDATE job_changes_horizon SET pruned_through = greatest(pruned_through, pg_snapshot_xmax(pg_current_snapshot()))
    RETURNING pruned_through::text AS horizon`
  return { horizon: row!.horizon }
}
