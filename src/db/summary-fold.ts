import { Type } from '@sinclair/typebox'
import { sql } from './sql.js'
import type { SqlReader } from './sql-reader.js'

// Writers of screens append deltas to the summaries (migration 20261123200000_summary_deltas);
// the fold moves them into the summary rows, a batch per statement, one fold at a time (the
// database function holds an advisory lock; another caller returns 0 at once). Readers add a
// job's unfolded deltas, so answers are exact whatever is folded. The API folds on a timer
// (plugins/summary-fold.ts), `npm run admin -- fold-stats` and tests until none is left
// (admin/screen-stats.ts, foldScreenStats).

/** Deltas moved per statement: one statement stays well under the statement timeout. */
export const FOLD_BATCH = 20_000

const MovedRow = Type.Object({ moved: Type.Integer() })

/** Moves up to FOLD_BATCH deltas into the summaries; how many it moved (0: none, or another fold runs). */
export async function foldBatch (db: SqlReader): Promise<number> {
  const [row] = await db.rows(MovedRow, sql`SELECT fold_screen_summary_deltas(${FOLD_BATCH}::int) AS moved`)
  return row?.moved ?? 0
}
