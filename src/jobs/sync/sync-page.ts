import { Type } from '@sinclair/typebox'
import { OrNullColumns } from '../../db/row-schemas.js'
import type { SqlReader } from '../../db/sql-reader.js'
import { sql } from '../../db/sql.js'
import { jobsWithStats, JobWithStatsRowSchema, withStats, type JobWithStats, type JobWithStatsRow } from '../job/job-rows.js'
import { PageFactsColumns, pageFacts, pageStatement, type LogPage, type PageOptions } from '../../changes/log-page.js'

// A sync's page of the change log (src/changes/log-page.ts's statement): the jobs changed,
// with their counts, and those gone. The webhooks' page is src/changes/changes-page.ts.

/** A sync page: its jobs themselves. */
export interface SyncPage extends LogPage {
  /** Jobs changed since the token and still the organization's, in the log's order. */
  jobs: JobWithStats[]
  /** Jobs changed since the token and no longer the organization's. */
  deletedIds: string[]
}

/** A sync page's row: a job changed (null columns: gone from the organization), and the page's facts. */
const SyncPageRow = Type.Composite([OrNullColumns(JobWithStatsRowSchema), Type.Object(PageFactsColumns)])

/** One page of the jobs changed since `since` after `after`, with their counts (pageStatement). */
export async function syncPage (reader: SqlReader, organizationId: string, options: PageOptions): Promise<SyncPage> {
  const rows = await reader.rows(SyncPageRow, pageStatement(organizationId, options, (changed, org) => jobsWithStats(
    sql`(SELECT p.job_id AS changed_id, p.first, p.last_xid, jobs.* FROM ${changed} p LEFT JOIN jobs ON jobs.id = p.job_id AND jobs.organization_id = ${org})`,
    sql`, j.changed_id AS "changedId", j.first, j.last_xid AS "changedXid"`
  )))
  const listed = rows.filter(row => row.changedId !== null)
  return {
    ...pageFacts(rows[0]!, options),
    jobs: listed.filter(row => row.id !== null).map(row => withStats(row as JobWithStatsRow)),
    deletedIds: listed.filter(row => row.id === null).map(row => row.changedId!),
  }
}
