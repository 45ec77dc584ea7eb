import { Type } from '@sinclair/typebox'
import { OrNull } from '../db/row-schemas.js'
import type { SqlReader } from '../db/sql-reader.js'
import { sql } from '../db/sql.js'
import { PageFactsColumns, pageFacts, pageStatement, type LogPage, type PageOptions } from './log-page.js'

// The webhooks' page of the change log (log-page.ts's statement): the jobs changed and
// whether they are still the organization's. A sync's page, with the jobs' counts, is
// src/jobs/sync/sync-page.ts.

/** A page of the change log's entries, as a webhook names them. */
export interface ChangesPage extends LogPage {
  /**
   * Every job of the page, in the log's order, with its latest entry's transaction on the page
   * and whether it is still the organization's: a webhook event's identity (src/webhooks/).
   */
  changes: Array<{ jobId: string, xid: string, present: boolean }>
}

/** A changes page's row: a job changed and whether it is still the organization's, and the page's facts. */
const ChangesPageRow = Type.Object({ ...PageFactsColumns, present: OrNull(Type.Boolean()) })

/**
 * One page of the jobs changed since `since` after `after`, without their counts: what a
 * webhook event names (src/webhooks/dispatch.ts). Its jobs cost an index probe each, not
 * their summaries, so a dispatcher reads a run's changes in one page of up to thousands
 * (a few texts: one per limit it uses), reading the unfolded deltas once, not once per 100.
 */
export async function changesPage (reader: SqlReader, organizationId: string, options: PageOptions): Promise<ChangesPage> {
  const rows = await reader.rows(ChangesPageRow, pageStatement(organizationId, options, (changed, org) => sql`
    SELECT p.job_id::text AS "changedId", p.first, p.last_xid AS "changedXid",
           EXISTS (SELECT FROM jobs WHERE jobs.id = p.job_id AND jobs.organization_id = ${org}) AS present
    FROM ${changed} p`))
  const listed = rows.filter(row => row.changedId !== null)
  return { ...pageFacts(rows[0]!, options), changes: listed.map(row => ({ jobId: row.changedId!, xid: row.changedXid!, present: row.present === true })) }
}
