import { Type } from '@sinclair/typebox'
import { OrNull, OrNullColumns } from '../../db/row-schemas.js'
import type { SqlReader } from '../../db/rows.js'
import { Prisma as PrismaSql } from '../../generated/prisma/client.js'
import { jobsWithStats, JobWithStatsRowSchema, withStats, type JobWithStats, type JobWithStatsRow } from '../job/rows.js'
import { PageFactsColumns, pageFacts, pageStatement, type LogPage, type PageOptions } from './log-page.js'

// The pages readers of the change log get (log-page.ts's statement): a sync's, its jobs with
// their counts; a webhook dispatcher's, the jobs changed and whether they are still there.

/** A page of the change log's entries, as a webhook names them. */
export interface ChangesPage extends LogPage {
  /**
   * Every job of the page, in the log's order, with its latest entry's transaction on the page
   * and whether it is still the organization's: a webhook event's identity (src/webhooks/).
   */
  changes: Array<{ jobId: string, xid: string, present: boolean }>
}

/** A sync page: its jobs themselves. */
export interface SyncPage extends LogPage {
  /** Jobs changed since the token and still the organization's, in the log's order. */
  jobs: JobWithStats[]
  /** Jobs changed since the token and no longer the organization's. */
  deletedIds: string[]
}

/** A sync page's row: a job changed (null columns: gone from the organization), and the page's facts. */
const SyncPageRow = Type.Composite([OrNullColumns(JobWithStatsRowSchema), Type.Object(PageFactsColumns)])

/** A changes page's row: a job changed and whether it is still the organization's, and the page's facts. */
const ChangesPageRow = Type.Object({ ...PageFactsColumns, present: OrNull(Type.Boolean()) })

/** One page of the jobs changed since `since` after `after`, with their counts (pageStatement). */
export async function syncPage (reader: SqlReader, organizationId: string, options: PageOptions): Promise<SyncPage> {
  const rows = await reader.rows(SyncPageRow, pageStatement(organizationId, options, (changed, org) => jobsWithStats(
    PrismaSql.sql`(SELECT p.job_id AS changed_id, p.first, p.last_xid, jobs.* FROM ${changed} p LEFT JOIN jobs ON jobs.id = p.job_id AND jobs.organization_id = ${org})`,
    PrismaSql.sql`, j.changed_id AS "changedId", j.first, j.last_xid AS "changedXid"`
  )))
  const listed = rows.filter(row => row.changedId !== null)
  return {
    ...pageFacts(rows[0]!, options),
    jobs: listed.filter(row => row.id !== null).map(row => withStats(row as JobWithStatsRow)),
    deletedIds: listed.filter(row => row.id === null).map(row => row.changedId!),
  }
}

/**
 * One page of the jobs changed since `since` after `after`, without their counts: what a
 * webhook event names (src/webhooks/dispatch.ts). Its jobs cost an index probe each, not
 * their summaries, so a dispatcher reads a run's changes in one page of up to thousands
 * (a few texts: one per limit it uses), reading the unfolded deltas once, not once per 100.
 */
export async function changesPage (reader: SqlReader, organizationId: string, options: PageOptions): Promise<ChangesPage> {
  const rows = await reader.rows(ChangesPageRow, pageStatement(organizationId, options, (changed, org) => PrismaSql.sql`
    SELECT p.job_id::text AS "changedId", p.first, p.last_xid AS "changedXid",
           EXISTS (SELECT FROM jobs WHERE jobs.id = p.job_id AND jobs.organization_id = ${org}) AS present
    FROM ${changed} p`))
  const listed = rows.filter(row => row.changedId !== null)
  return { ...pageFacts(rows[0]!, options), changes: listed.map(row => ({ jobId: row.changedId!, xid: row.changedXid!, present: row.present === true })) }
}
