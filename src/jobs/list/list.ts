import { Type } from '@sinclair/typebox'
import { OrNull, OrNullColumns } from '../../db/row-schemas.js'
import type { SqlReader } from '../../db/sql-reader.js'
import { empty, sql } from '../../db/sql.js'
import type { JobStatus } from '../../generated/prisma/enums.js'
import { pageSize } from '../../db/page-size.js'
import { jobsWithStats, JobWithStatsRowSchema, withStats, type JobWithStats, type JobWithStatsRow } from '../job/job-rows.js'
import { StatementPointColumns, SYNC_POINT, type StatementPoint } from '../../changes/point.js'

/** A list page's row: a job of the page (null columns: an empty page), and what the statement saw. */
const ListPageRow = Type.Composite([OrNullColumns(JobWithStatsRowSchema), Type.Object({
  hasMore: OrNull(Type.Boolean()),
  ...StatementPointColumns,
})])

export interface JobPosition { createdAt: Date, id: string }

/**
 * One page of the organization's jobs, newest first (ties broken by id), after `after`:
 * a keyset scan of the (organization, [status,] created_at, id) index. The position is a row comparison, which PostgreSQL uses as the index scan's start; the
 * equivalent `created_at < t OR (created_at = t AND id < i)` is only a filter, so page n
 * read and dropped the n - 1 pages before it (measured: 380 rows dropped on page 20).
 */
export async function listJobs (reader: SqlReader, organizationId: string, options: { limit: number, status?: JobStatus, after?: JobPosition }): Promise<{ jobs: JobWithStats[], hasMore: boolean } & StatementPoint> {
  const { after, status } = options
  const limit = pageSize(options.limit)
  // `limit + 1` rows tell whether there is a next page; the counts are computed for the
  // first `limit` only. The page is joined to one row of what the statement could see
  // (SYNC_POINT, for the walk's sync token; the first page also reads the database's history),
  // so that an empty page has it too, from the same snapshot as its (absent) rows.
  const rows = await reader.rows(ListPageRow, sql`
    WITH page AS (
      SELECT * FROM jobs j
      WHERE j.organization_id = ${organizationId}::uuid
        ${status !== undefined ? sql`AND j.status = ${status}::job_status` : empty}
        ${after !== undefined ? sql`AND (j.created_at, j.id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)` : empty}
      ORDER BY j.created_at DESC, j.id DESC
      LIMIT ${pageSize(options.limit + 1)}
    )
    SELECT point.*, r.* FROM (${SYNC_POINT(after === undefined && status === undefined)}) point LEFT JOIN (
      ${jobsWithStats(
        sql`(SELECT *, (SELECT count(*) FROM page) > ${limit} AS more FROM page ORDER BY created_at DESC, id DESC LIMIT ${limit})`,
        sql`, j.more AS "hasMore"`
      )}
    ) r ON true
    ORDER BY r."createdAt" DESC, r.id DESC`)
  const { snapshot, generation, history } = rows[0]!
  const listed = rows.filter(row => row.id !== null)
  return {
    jobs: listed.map(row => withStats(row as JobWithStatsRow)),
    hasMore: listed[0]?.hasMore ?? false,
    snapshot,
    generation,
    ...(history !== undefined ? { history } : {}),
  }
}
