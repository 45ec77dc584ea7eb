import type { SignedJson } from '../signed-json.js'

// Cursors of the webhook lists: signed (CURSOR_SECRET), of their kind, bound to the
// organization and, for deliveries, the endpoint; keyset positions (time, id), newest first.

export interface KeysetPosition { at: Date, id: string }

interface Payload { k: string, o: string, e?: string, t: string, i: string }

export class ListCursors {
  constructor (private readonly signer: SignedJson, private readonly kind: 'webhook-endpoints' | 'webhook-deliveries') {}

  encode (organizationId: string, scope: string | undefined, position: KeysetPosition): string {
    const payload: Payload = { k: this.kind, o: organizationId, t: position.at.toISOString(), i: position.id }
    if (scope !== undefined) payload.e = scope
    return this.signer.seal(payload)
  }

  /** The position a cursor names, or undefined when it is not one of this list. */
  decode (cursor: string, organizationId: string, scope: string | undefined): KeysetPosition | undefined {
    const payload = this.signer.open(cursor) as Partial<Payload> | undefined
    if (payload?.k !== this.kind || payload.o !== organizationId || payload.e !== scope || typeof payload.i !== 'string') return undefined
    const at = new Date(payload.t ?? '')
    return Number.isNaN(at.getTime()) ? undefined : { at, id: payload.i }
  }
}
