import { createHash } from 'node:crypto'
import type { ChangePosition } from '../../changes/log-page.js'
import type { SignedJson } from '../../signed-json.js'
import { parseSnapshot, snapshotText, type Snapshot } from '../../changes/snapshot.js'

// Sync tokens and the cursors of a sync's pages: signed (an edited one is refused, not
// interpreted) and bound to the organization. A token is a point (a snapshot); a sync page's
// cursor also names its sync's token (`b`, a hash of the token's snapshot: the snapshot itself
// until issue 35, which with the place below made a cursor longer than the 512 characters the
// document allows once transaction ids have 14 digits), the place in the change log its last
// page reached (`a`, `xid:job id`), and what its pages could all see so far (the next token).

interface TokenPayload { k: 'sync', o: string, x: string, g: number, h: string, n: boolean }
interface PagePayload { k: 'sync-page', o: string, b: string, a: string, x: string, n: boolean }

/**
 * Where the next page starts (undefined: at the start of the log), what the sync's pages saw
 * so far, and whether they all reported the changes of analytics alone.
 */
export interface SyncCursor { after: ChangePosition | undefined, seen: Snapshot, analytics: boolean }

/**
 * A token's point: what the walk or sync saw, in which generation of the change log, on which
 * database history (src/changes/history.ts; '' when not known: a token of the release before,
 * which answers 410), and whether every sync since the walk reported the changes of analytics
 * alone (`n`: false once a sync for a key that cannot read analytics skipped them; true for a
 * walk, which skips nothing, and for tokens of the releases before).
 */
export interface SyncPoint { seen: Snapshot, generation: number, history: string, analytics: boolean }

/** What a sync page's cursor names of its sync's token. */
const binding = (since: SyncPoint): string => createHash('sha256').update(snapshotText(since.seen)).digest('base64url').slice(0, 16)

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const POSITION = /^(\d{1,20}):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

export class SyncTokens {
  constructor (private readonly signer: SignedJson) {}

  token (organizationId: string, point: SyncPoint): string {
    const payload: TokenPayload = { k: 'sync', o: organizationId, x: snapshotText(point.seen), g: point.generation, h: point.history, n: point.analytics }
    return this.signer.seal(payload)
  }

  /**
   * A token's point, or undefined when it is not a sync token of this organization. A token of
   * the release before has no history (`h`): its point has '' and answers 410, never 400.
   */
  point (token: string, organizationId: string): SyncPoint | undefined {
    const payload = this.signer.open(token) as Partial<TokenPayload> | undefined
    if (payload?.k !== 'sync' || payload.o !== organizationId || typeof payload.x !== 'string' || !Number.isSafeInteger(payload.g)) return undefined
    if ((payload.h !== undefined && typeof payload.h !== 'string') || (payload.n !== undefined && typeof payload.n !== 'boolean')) return undefined
    const seen = parseSnapshot(payload.x)
    return seen === undefined ? undefined : { seen, generation: payload.g!, history: payload.h ?? '', analytics: payload.n ?? true }
  }

  cursor (organizationId: string, since: SyncPoint, after: ChangePosition, seen: Snapshot, analytics: boolean): string {
    const payload: PagePayload = { k: 'sync-page', o: organizationId, b: binding(since), a: `${after.xid}:${after.jobId}`, x: snapshotText(seen), n: analytics }
    return this.signer.seal(payload)
  }

  /**
   * Where a sync's cursor points, or undefined when it is not one of this sync (organization
   * and token). A cursor of the release before, which paged by job id (`a` a job id), starts
   * the sync over from the start of the log, with what its pages saw: a job may come twice,
   * none is missed. (The release before refuses this release's cursors, a 400, rather than
   * read a position it does not know as a job id.)
   */
  page (cursor: string, organizationId: string, since: SyncPoint): SyncCursor | undefined {
    const payload = this.signer.open(cursor) as Partial<PagePayload> | undefined
    if (payload?.k !== 'sync-page' || payload.o !== organizationId || (payload.b !== binding(since) && payload.b !== snapshotText(since.seen))) return undefined
    if (typeof payload.a !== 'string' || typeof payload.x !== 'string' || (payload.n !== undefined && typeof payload.n !== 'boolean')) return undefined
    const seen = parseSnapshot(payload.x)
    if (seen === undefined) return undefined
    const analytics = payload.n ?? true
    if (UUID.test(payload.a)) return { after: undefined, seen, analytics }
    const position = POSITION.exec(payload.a)
    return position === null ? undefined : { after: { xid: position[1]!, jobId: position[2]! }, seen, analytics }
  }
}
