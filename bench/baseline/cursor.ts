// The service's cursor format, re-implemented (the baseline imports nothing from src/):
// base64url(JSON {o, s, t, i}) + "." + base64url(first 16 bytes of HMAC-SHA256(body)).
// Same secret, same position: the same cursor, byte for byte. No status filter here (s null).
import { createHmac, timingSafeEqual } from 'node:crypto'

export interface Position { createdAt: string, id: string }

export class Cursors {
  private readonly secret: Buffer
  constructor (secret: string) {
    this.secret = Buffer.from(secret)
  }

  private sign (body: string): Buffer {
    return createHmac('sha256', this.secret).update(body).digest().subarray(0, 16)
  }

  /** `createdAt` as toISOString() writes it. */
  encode (organizationId: string, position: Position): string {
    const body = Buffer.from(JSON.stringify({ o: organizationId, s: null, t: position.createdAt, i: position.id })).toString('base64url')
    return `${body}.${this.sign(body).toString('base64url')}`
  }

  /** The position, or undefined when the cursor is not a valid one of this organization's list. */
  decode (cursor: string, organizationId: string): Position | undefined {
    const [body, signature, ...rest] = cursor.split('.')
    if (body === undefined || signature === undefined || rest.length > 0) return undefined
    const given = Buffer.from(signature, 'base64url')
    const expected = this.sign(body)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
    try {
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as { o?: unknown, s?: unknown, t?: unknown, i?: unknown }
      if (payload.o !== organizationId || payload.s !== null || typeof payload.t !== 'string' || typeof payload.i !== 'string') return undefined
      if (Number.isNaN(Date.parse(payload.t))) return undefined
      return { createdAt: payload.t, id: payload.i }
    } catch {
      return undefined
    }
  }
}
