import { empty, sql, type Sql } from '../../db/sql.js'
import { averageOf } from '../job/job-rows.js'

/**
 * Weekly bins as one JSON text, `[["YYYY-MM-DD",count,average],…]` ascending, of `source`'s rows
 * `w` (week, completed, scored, score_sum; one a week) that `where` keeps: what body.ts copies
 * into the answer. job_weekly_bins_in_zone (a migration) writes the same text.
 */
export const BINS_TEXT = (source: Sql, where?: Sql): Sql => sql`(
      SELECT '[' || string_agg('["' || to_char(w.week, 'YYYY-MM-DD') || '",' || w.completed || ','
                               || coalesce(${averageOf(sql`w.score_sum`, sql`w.scored`)}::text, 'null') || ']', ',' ORDER BY w.week) || ']'
      FROM ${source}
      ${where !== undefined ? sql`WHERE ${where}` : empty})`
