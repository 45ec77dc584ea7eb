import { Type } from '@sinclair/typebox'
import type { SqlReader } from '../db/sql-reader.js'
import { sql } from '../db/sql.js'
import { StatementPointColumns, SYNC_POINT, type StatementPoint } from './point.js'
import type { Snapshot } from './snapshot.js'

// Which sync positions have nothing to read: one statement for many, so that a reader that
// follows many organizations (the webhooks' dispatcher) reads a page (page.ts) only for
// those that may have changed, instead of one page per organization every run.

/** One position: an organization's, from a snapshot. */
export interface QuietProbe { organizationId: string, since: Snapshot }

/** `quiet`: a character per probe, in their order, '1' quiet (text: rows.ts converts no boolean array). */
const QuietRow = Type.Object({ quiet: Type.String(), ...StatementPointColumns })

/**
 * For each probe, whether a sync page from it would certainly have no change and not be
 * expired: no entry of its organization in the log from its xmin on, no unfolded delta or
 * pending change of one of its jobs from there, the log not pruned past it, and its xmax not
 * ahead of this snapshot. Conservative (every entry from xmin counts, analytics-only ones
 * too): where it answers false, a page is read and may find nothing. With the statement's
 * point, which a quiet position may move to (generation and history still to compare).
 */
export async function quietSince (reader: SqlReader, probes: QuietProbe[]): Promise<{ quiet: boolean[] } & StatementPoint> {
  const organizations = probes.map(p => p.organizationId)
  const xmins = probes.map(p => p.since.xmin.toString())
  const xmaxes = probes.map(p => p.since.xmax.toString())
  const [row] = await reader.rows(QuietRow, sql`
    WITH probes AS (SELECT * FROM unnest(${organizations}::uuid[], ${xmins}::xid8[], ${xmaxes}::xid8[]) WITH ORDINALITY AS p(organization_id, xmin, xmax, place)),
    -- Every organization's unfolded deltas and pending changes, read once: few (the fold runs every second).
    fresh AS MATERIALIZED (
      SELECT j.organization_id, max(f.xid) AS xid FROM (
        SELECT d.job_id, d.xid FROM screen_summary_deltas d WHERE d.xid >= (SELECT min(xmin) FROM probes)
        UNION ALL
        SELECT q.job_id, q.xid FROM job_changes_pending q WHERE q.xid >= (SELECT min(xmin) FROM probes)
      ) f JOIN jobs j ON j.id = f.job_id
      GROUP BY j.organization_id
    )
    SELECT point.*, coalesce((
      SELECT string_agg(CASE WHEN (
        EXISTS (SELECT 1 FROM job_changes c WHERE c.organization_id = p.organization_id AND c.xid >= p.xmin)
        OR EXISTS (SELECT 1 FROM fresh WHERE fresh.organization_id = p.organization_id AND fresh.xid >= p.xmin)
        OR (SELECT h.pruned_through >= p.xmin FROM job_changes_horizon h)
        OR p.xmax > pg_snapshot_xmax(pg_current_snapshot())
      ) THEN '0' ELSE '1' END, '' ORDER BY p.place) FROM probes p), '') AS quiet
    FROM (${SYNC_POINT(true)}) point`)
  return { ...row!, quiet: [...row!.quiet].map(c => c === '1') }
}
