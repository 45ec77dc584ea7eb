import { Type } from '@sinclair/typebox'
import { sql } from '../db/sql.js'
import type { SqlReader } from '../db/sql-reader.js'

const GenerationRow = Type.Object({ generation: Type.Integer() })

/**
 * Makes every sync token made so far answer 410 `sync_token_expired`, so that partners walk
 * again. For when the database went back in time: a restore from a backup, or a failover
 * that lost transactions the old primary had committed (asynchronous replication). Their
 * changes are gone from the log too, and their transaction ids will be handed out again, so
 * no token made before can be answered exactly, whatever its ids. Changes the change log's
 * generation, which every token carries (expire_sync_tokens(), migration
 * 20261125140000_job_changes); returns the new one.
 */
export async function expireSyncTokens (db: SqlReader): Promise<{ generation: number }> {
  const [row] = await db.rows(GenerationRow, sql`SELECT expire_sync_tokens() AS generation`)
  return { generation: row!.generation }
}
