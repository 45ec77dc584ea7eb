import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { JobPosition } from './repository.js'

// An opaque cursor: base64url(JSON) + "." + HMAC. Signed so that an edited cursor is
// refused rather than interpreted, and bound to the organization and the filter it was
// made for, so that it cannot be replayed by another caller or with another query.

interface Payload { o: string, s: string | null, t: string, i: string }

export class CursorCodec {
  private readonly secret: Buffer
  constructor (secret: string | undefined) {
    this.secret = secret !== undefined ? Buffer.from(secret) : randomBytes(32)
  }

  private sign (body: string): Buffer {
    return createHmac('sha256', this.secret).update(body).digest().subarray(0, 16)
  }

  encode (organizationId: string, status: string | undefined, position: JobPosition): string {
    const payload: Payload = { o: organizationId, s: status ?? null, t: position.createdAt.toISOString(), i: position.id }
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url')
    return `${body}.${this.sign(body).toString('base64url')}`
  }

  /** The position a cursor points at, or undefined when it is not a valid cursor for this query. */
  decode (cursor: string, organizationId: string, status: string | undefined): JobPosition | undefined {
    const [body, signature, ...rest] = cursor.split('.')
    if (body === undefined || signature === undefined || rest.length > 0) return undefined
    const given = Buffer.from(signature, 'base64url')
    const expected = this.sign(body)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
    let payload: Payload
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Payload
    } catch {
      return undefined
    }
    const createdAt = new Date(payload.t)
    if (payload.o !== organizationId || payload.s !== (status ?? null) || Number.isNaN(createdAt.getTime()) || typeof payload.i !== 'string') return undefined
    return { createdAt, id: payload.i }
  }
}
