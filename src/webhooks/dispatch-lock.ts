import { Type } from '@sinclair/typebox'
import { sql } from '../db/sql.js'
import type { SqlReader } from '../db/sql-reader.js'

// One dispatcher run at a time over every instance, and where a run's snapshot ends in the
// WAL: the two statements a run's transaction starts with (dispatch.ts).

const DISPATCH_LOCK = 8146720561340519

const LockRow = Type.Object({ got: Type.Boolean() })

/** Whether this transaction holds the run (until it ends); false while another instance's runs. */
export async function takeDispatchLock (reader: SqlReader): Promise<boolean> {
  const [lock] = await reader.rows(LockRow, sql`SELECT pg_try_advisory_xact_lock(${DISPATCH_LOCK}) AS got`)
  return lock?.got === true
}

const LsnRow = Type.Object({ lsn: Type.String() })

/** A WAL position past the commit of every change the transaction's snapshot shows. */
export async function walInsertPosition (reader: SqlReader): Promise<string> {
  return (await reader.rows(LsnRow, sql`SELECT pg_current_wal_insert_lsn()::text AS lsn`))[0]!.lsn
}
