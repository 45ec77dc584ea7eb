import type { Database } from '../../db/database.js'
import { invalidRequest, syncTokenExpired } from '../../errors.js'
import type { JobList } from '../../schemas/job-list.js'
import { presentJob } from '../job/present.js'
import { syncPage } from './sync-page.js'
import type { StatementPoint } from '../../changes/point.js'
import { bounded, intersect, parseSnapshot, type Snapshot } from '../../changes/snapshot.js'
import { historyId } from '../../changes/history.js'
import type { SyncPoint, SyncTokens } from './tokens.js'

// The sync side of GET /api/jobs: a sync's pages, and the point a walk's pages carry towards
// their token (docs/sync-design.md).

/** A page's snapshot as read by the database (always well formed). */
function pageSnapshot (text: string): Snapshot {
  const snapshot = parseSnapshot(text)
  if (snapshot === undefined) throw new Error(`unexpected snapshot from the database: ${text}`)
  return snapshot
}

// A walk's cursor made before cursors carried a snapshot: nothing is known of its earlier
// pages, so its token's point is the start of the change log, which the migration that made
// the log marks as pruned: the token answers 410 and the partner walks again.
const BEFORE_EVERYTHING: Snapshot = { xmin: 1n, xmax: 1n, xip: [] }

/**
 * What every page of a walk could see, in the generation of the change log and on the
 * database history its first page saw: `earlier` from the walk's cursor (none on its first
 * page), `page` from this page's statement (which reads the history on the first page only).
 * The walk's sync token, on its last page. A walk resumed from a cursor of the release before
 * has no history: its token answers 410.
 */
export function walkPoint (earlier: SyncPoint | undefined, page: StatementPoint, resumed: boolean): SyncPoint {
  const here = pageSnapshot(page.snapshot)
  if (!resumed) return { seen: bounded(here), generation: page.generation, history: page.history === undefined ? '' : historyId(page.history), analytics: true }
  return { seen: bounded(intersect(earlier?.seen ?? BEFORE_EVERYTHING, here)), generation: earlier?.generation ?? page.generation, history: earlier?.history ?? '', analytics: true }
}

/**
 * A page of a sync: the jobs changed since the token's point, in the change log's order, and
 * those gone. `analytics`: whether the caller may read analytics now (the scope and the plan);
 * without, changes of analytics alone are skipped, and the next token says so: a token whose
 * syncs skipped them answers 410 to a caller that may read analytics (its mirror's analytics
 * may lack those changes), so that its partner walks again.
 */
export async function syncJobsPage (database: Database, tokens: SyncTokens, request: { organizationId: string, token: string, cursor: string | undefined, limit: number, analytics: boolean }): Promise<JobList> {
  const { organizationId, token, cursor, limit, analytics } = request
  const since = tokens.point(token, organizationId)
  if (since === undefined) throw invalidRequest([{ path: 'querystring/changed_since', message: 'is not a sync token of this organization (altered, or made for another organization)' }])
  const resumed = cursor === undefined ? undefined : tokens.page(cursor, organizationId, since)
  if (cursor !== undefined && resumed === undefined) {
    throw invalidRequest([{ path: 'querystring/cursor', message: 'is not a cursor of this sync (altered, or made for another organization or sync token)' }])
  }
  if (!since.analytics && analytics) throw syncTokenExpired()
  const page = await database.read(async reader => await syncPage(reader, organizationId, {
    since,
    limit,
    analytics,
    ...(resumed?.after !== undefined ? { after: resumed.after } : {}),
  }))
  // Another database history than the token's (a restore into another cluster or database),
  // or none known (a token of the release before): 410, never answered.
  if (page.expired || historyId(page.history) !== since.history) throw syncTokenExpired()
  const here = pageSnapshot(page.snapshot)
  const seen = bounded(resumed !== undefined ? intersect(resumed.seen, here) : here)
  const reported = (resumed?.analytics ?? true) && analytics
  return {
    data: page.jobs.map(presentJob),
    next_cursor: page.nextAfter !== undefined ? tokens.cursor(organizationId, since, page.nextAfter, seen, reported) : null,
    sync_token: page.nextAfter === undefined ? tokens.token(organizationId, { seen, generation: since.generation, history: since.history, analytics: reported }) : null,
    deleted_ids: page.deletedIds,
  }
}
