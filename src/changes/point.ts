import { Type, type Static } from '@sinclair/typebox'
import { empty, sql, type Sql } from '../db/sql.js'
import type { SqlReader } from '../db/sql-reader.js'

// What a page's statement could see, read by the statement itself (joined to its rows, so
// that an empty page has it too): the point a walk's and a sync's tokens are made of
// (docs/sync-design.md).

/**
 * What the statement can see, as a sync token's point (src/changes/snapshot.ts): its snapshot,
 * `xmin:xmax:in-progress`. On a standby, pg_current_snapshot() lists no transaction in
 * progress (a standby's snapshot keeps them all among subtransactions, which it leaves out),
 * so the primary's transactions in progress below xmax would pass for visible: there, the
 * point is `xmin:xmin:` instead (every transaction from the oldest in progress counts as not
 * seen). Conservative: a sync from it reports a little more, never less.
 */
const READER_SNAPSHOT = sql`(CASE WHEN pg_is_in_recovery()
  THEN pg_snapshot_xmin(pg_current_snapshot())::text || ':' || pg_snapshot_xmin(pg_current_snapshot())::text || ':'
  ELSE pg_current_snapshot()::text END)`

/**
 * What a page's statement could see (READER_SNAPSHOT), the change log's generation, and (when
 * asked for) which database history it read (DATABASE_HISTORY).
 */
export interface StatementPoint { snapshot: string, generation: number, history?: string }

/**
 * The database history the statement reads (`system identifier:database oid`, migration
 * 20261126140200_sync_token_history; src/changes/history.ts): what a dump or a copy does not
 * carry to another cluster or database. It reads pg_control and the catalog (about 20 µs,
 * measured with pgbench): read by a walk's first page and by every sync page, not by a walk's
 * later pages, which carry it in their cursor.
 */
const DATABASE_HISTORY = sql`database_history()`

/**
 * One row: the statement's snapshot and the change log's generation, which
 * `npm run admin -- expire-sync-tokens` (and a TRUNCATE of jobs) changes so that every token
 * made before answers 410 (migration 20261125140000_job_changes); with `history`, the
 * database's (DATABASE_HISTORY).
 */
export const SYNC_POINT = (history: boolean): Sql => sql`SELECT ${READER_SNAPSHOT} AS snapshot, (SELECT generation FROM job_changes_horizon) AS generation${history ? sql`, ${DATABASE_HISTORY} AS history` : empty}`

/** The columns SYNC_POINT adds to a page's row (history only when asked for). */
export const StatementPointColumns = {
  snapshot: Type.String(),
  generation: Type.Integer(),
  history: Type.Optional(Type.String()),
}

const CurrentPointRow = Type.Object({ ...StatementPointColumns, history: Type.String() })

/** What `reader` sees now, with the database's history: where a new webhook endpoint starts. */
export const currentPoint = async (reader: SqlReader): Promise<Static<typeof CurrentPointRow>> => (await reader.rows(CurrentPointRow, SYNC_POINT(true)))[0]!
