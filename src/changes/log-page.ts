import { Type, type Static, type TObject } from '@sinclair/typebox'
import { ReadElsewhere } from '../db/errors.js'
import { pageSize } from '../db/page-size.js'
import { OrNull } from '../db/row-schemas.js'
import { empty, join, raw, sql, type Sql } from '../db/sql.js'
import { StatementPointColumns, SYNC_POINT, type StatementPoint } from './point.js'
import { bounded, MAX_IN_PROGRESS, snapshotText, type Snapshot } from './snapshot.js'

// One page of the change log since a token: the statement every reader of the log shares (a
// sync page, a webhook's changes: src/jobs/sync/sync-page.ts, changes-page.ts), and the facts its first row carries.

/** Where a sync is in the change log: the last entry (transaction, job) a page answered. */
export interface ChangePosition { xid: string, jobId: string }

/** What every page of the change log says beside its entries, with what its statement could see. */
export interface LogPage extends StatementPoint {
  /** The position of the page's last entry, when there are more. */
  nextAfter: ChangePosition | undefined
  /**
   * The change log no longer reaches back to the token, was expired since, or has not reached
   * the token's point (the database went back in time): it cannot be answered exactly.
   */
  expired: boolean
  /** The database history the statement read (DATABASE_HISTORY). */
  history: string
}

export interface PageOptions { since: { seen: Snapshot, generation: number }, limit: number, after?: ChangePosition, analytics: boolean }

/** What every page's row carries: its first entry's place and the page's facts. */
export const PageFactsColumns = {
  changedId: OrNull(Type.String()),
  changedXid: OrNull(Type.String()),
  first: OrNull(Type.Integer()),
  nextXid: OrNull(Type.String()),
  nextJob: OrNull(Type.String()),
  hasMore: Type.Boolean(),
  prunedPast: Type.Boolean(),
  ahead: Type.Boolean(),
  onStandby: Type.Boolean(),
  ...StatementPointColumns,
}

/** A page's facts, as its row carries them. */
type PageFacts = Static<TObject<typeof PageFactsColumns>>

/**
 * The token saw transactions this standby has not replayed: whether the database went back
 * since (a lossy failover, a restore: 410) only the primary can tell, so the page is read on
 * another replica that has them, or the primary.
 */
export class TokenAheadOfReplica extends ReadElsewhere {
  constructor () { super('the sync token is ahead of this replica') }
}

// Before every entry of the log (no transaction has id 0, no job the nil uuid).
const LOG_START: ChangePosition = { xid: '0', jobId: '00000000-0000-0000-0000-000000000000' }

/**
 * The statement of one page of the jobs changed since `since` (a snapshot: a change is after it when its
 * transaction is not visible in it), in the order of the change log's entries (transaction,
 * job) after `after`: from the change log (job_changes) and the screens' deltas not folded
 * into it yet, which the fold moves into the log in one commit, with the same transaction and
 * job, so at the same place in that order; likewise the changes writers left pending (a
 * question's write: job_changes_pending). One statement, so one snapshot for the log, the
 * deltas, the pending changes and the jobs. Without `analytics` (a key that cannot read analytics), only the
 * changes of what a job's item shows.
 *
 * What it reads is bounded by the page: the entries after the token are those of transactions
 * from its xmax on, of the (at most MAX_IN_PROGRESS) transactions it lists as in progress, and
 * the rows marked `collapsed` in between (such a row stands for several transactions up to
 * its own: it counts as changed unless the token's xmin is above it; migration
 * 20261125140000_job_changes). Each is an index range of the organization's log from `after`
 * on, read for `limit + 1` entries at most (the collapsed rows through a partial index of
 * their own), so a page never reads the entries visible in the token that lie between its
 * xmin and xmax, nor those of earlier pages. The unfolded deltas and pending changes of every
 * organization are read whole (few: the fold runs every second).
 *
 * Its rows: `rowsOf` the page's jobs (`changed`: job_id, its first place on the page and its
 * last transaction there), each joined to the page's facts (one row of facts alone when none).
 */
export function pageStatement (organizationId: string, options: PageOptions, rowsOf: (changed: Sql, org: Sql) => Sql): Sql {
  const limit = pageSize(options.limit)
  const seen = bounded(options.since.seen)
  const after = options.after ?? LOG_START
  const take = pageSize(options.limit + 1)
  const token = sql`${snapshotText(seen)}::pg_snapshot`
  const org = sql`${organizationId}::uuid`
  const from = (alias: string): Sql => sql`(${raw(alias)}.xid, ${raw(alias)}.job_id) > (${after.xid}::xid8, ${after.jobId}::uuid)`
  // Without analytics, the changes of analytics alone are skipped (migration
  // 20261126140300_job_changes_analytics_only): the ranges read the log's partial index of the
  // others, so a page does not read past what it skips; a transaction's unfolded deltas of a
  // job count when their sums of interviews, scored screens or scores are not zero.
  const shown = options.analytics ? empty : sql`AND NOT c.analytics_only`
  const logRange = (condition: Sql): Sql => sql`(
      SELECT c.xid, c.job_id FROM job_changes c
      WHERE c.organization_id = ${org} AND ${condition} ${shown} AND ${from('c')}
      ORDER BY c.xid, c.job_id LIMIT ${take})`
  // Always MAX_IN_PROGRESS of them (null: none), so that the statement's text is one.
  const inProgress = Array.from({ length: MAX_IN_PROGRESS }, (_, i) => logRange(sql`c.xid = ${seen.xip[i]?.toString() ?? null}::xid8`))
  return sql`
    WITH
    -- Every organization's, filtered first: the deltas and the pending changes not folded yet
    -- are few (the fold runs every second), the organization's jobs may be many.
    fresh_deltas AS MATERIALIZED (
      SELECT d.xid, d.job_id FROM screen_summary_deltas d
      WHERE d.xid >= ${seen.xmin.toString()}::xid8 AND NOT pg_visible_in_snapshot(d.xid, ${token}) AND ${from('d')}
      GROUP BY d.xid, d.job_id
      ${options.analytics ? empty : sql`HAVING sum(d.in_progress + d.completed + d.expired) <> 0 OR sum(d.scored) <> 0 OR sum(d.score_sum) <> 0`}
      UNION
      SELECT p.xid, p.job_id FROM job_changes_pending p
      WHERE p.xid >= ${seen.xmin.toString()}::xid8 AND NOT pg_visible_in_snapshot(p.xid, ${token}) AND ${from('p')}
      GROUP BY p.xid, p.job_id
      ${options.analytics ? empty : sql`HAVING NOT bool_and(p.analytics_only)`}
    ),
    positions AS MATERIALIZED (
      SELECT DISTINCT xid, job_id FROM (
        ${logRange(sql`c.xid >= ${seen.xmax.toString()}::xid8`)}
        ${join(inProgress.map(range => sql`UNION ALL ${range}`), ' ')}
        UNION ALL ${logRange(sql`c.collapsed AND c.xid >= ${seen.xmin.toString()}::xid8 AND c.xid < ${seen.xmax.toString()}::xid8 AND pg_visible_in_snapshot(c.xid, ${token})`)}
        UNION ALL (SELECT f.xid, f.job_id FROM fresh_deltas f JOIN jobs dj ON dj.id = f.job_id AND dj.organization_id = ${org}
                   ORDER BY f.xid, f.job_id LIMIT ${take})
      ) entries
      ORDER BY xid, job_id LIMIT ${take}
    ),
    page AS (SELECT xid, job_id, row_number() OVER (ORDER BY xid, job_id) AS place FROM positions),
    meta AS (
      SELECT point.*, (SELECT count(*) FROM positions) > ${limit} AS "hasMore",
             (SELECT xid::text FROM page WHERE place = ${limit}) AS "nextXid",
             (SELECT job_id::text FROM page WHERE place = ${limit}) AS "nextJob",
             (SELECT h.pruned_through >= ${seen.xmin.toString()}::xid8 FROM job_changes_horizon h) AS "prunedPast",
             -- A token can only be behind the primary's snapshot: ahead, the database went back
             -- (a restore, a lossy failover) and may hand its transactions' ids out again. A
             -- standby may only lag behind it: the page is read elsewhere (TokenAheadOfReplica).
             ${seen.xmax.toString()}::xid8 > pg_snapshot_xmax(pg_current_snapshot()) AS ahead,
             pg_is_in_recovery() AS "onStandby"
      FROM (${SYNC_POINT(true)}) point
    )
    SELECT meta.*, r.* FROM meta LEFT JOIN (
      ${rowsOf(sql`(SELECT job_id, min(place)::int AS first, max(xid)::text AS last_xid FROM page WHERE place <= ${limit} GROUP BY job_id)`, org)}
    ) r ON true
    ORDER BY r.first`
}

/** A page's facts, from its first row. */
export function pageFacts (meta: PageFacts, options: PageOptions): LogPage {
  if (meta.ahead && meta.onStandby) throw new TokenAheadOfReplica()
  return {
    nextAfter: meta.hasMore && meta.nextXid !== null && meta.nextJob !== null ? { xid: meta.nextXid, jobId: meta.nextJob } : undefined,
    snapshot: meta.snapshot,
    generation: meta.generation,
    expired: meta.prunedPast || meta.ahead || meta.generation !== options.since.generation,
    history: meta.history!,
  }
}
