import type { JobPosition } from './list.js'
import type { SignedJson } from '../../signed-json.js'
import { parseSnapshot, snapshotText } from '../../changes/snapshot.js'
import type { SyncPoint } from '../sync/tokens.js'

// A list cursor: signed, bound to the organization and the filter it was made for, so that
// it cannot be replayed by another caller or with another query. It also carries what the
// walk's pages could all see so far (`x`, a snapshot), which becomes the walk's sync token,
// with the change log's generation (`g`) and the database's history (`h`) its first page read.

interface Payload { o: string, s: string | null, t: string, i: string, x?: string, g?: number, h?: string }

/**
 * Where a walk is, and (without a status filter) what its pages saw, in which generation of the
 * change log and on which database history ('' for a cursor of the release before, which had
 * none: the walk's token then answers 410).
 */
export interface CursorState { position: JobPosition, point?: SyncPoint }

export class CursorCodec {
  constructor (private readonly signer: SignedJson) {}

  encode (organizationId: string, status: string | undefined, position: JobPosition, point?: SyncPoint): string {
    const payload: Payload = { o: organizationId, s: status ?? null, t: position.createdAt.toISOString(), i: position.id }
    // A walk skips nothing: its point's `analytics` is always true, not written.
    if (point !== undefined) Object.assign(payload, { x: snapshotText(point.seen), g: point.generation, h: point.history })
    return this.signer.seal(payload)
  }

  /** Where a cursor points, or undefined when it is not a valid cursor for this query. */
  decode (cursor: string, organizationId: string, status: string | undefined): CursorState | undefined {
    const payload = this.signer.open(cursor) as Partial<Payload> | undefined
    if (payload === undefined || 'k' in payload) return undefined
    const createdAt = new Date(payload.t ?? '')
    if (payload.o !== organizationId || payload.s !== (status ?? null) || Number.isNaN(createdAt.getTime()) || typeof payload.i !== 'string') return undefined
    const position = { createdAt, id: payload.i }
    if (payload.x === undefined) return { position }
    const seen = typeof payload.x === 'string' ? parseSnapshot(payload.x) : undefined
    if (seen === undefined || !Number.isSafeInteger(payload.g) || (payload.h !== undefined && typeof payload.h !== 'string')) return undefined
    return { position, point: { seen, generation: payload.g!, history: payload.h ?? '', analytics: true } }
  }
}
