import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

// Opaque tokens handed to clients (list cursors, sync tokens): base64url(JSON) + "." + HMAC.
// Signed so that an edited token is refused rather than interpreted. Each kind of token
// carries its own `k`, so that one kind is never read as another.

export class SignedJson {
  private readonly secret: Buffer
  constructor (secret: string | undefined) {
    this.secret = secret !== undefined ? Buffer.from(secret) : randomBytes(32)
  }

  private sign (body: string): Buffer {
    return createHmac('sha256', this.secret).update(body).digest().subarray(0, 16)
  }

  seal (payload: object): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url')
    return `${body}.${this.sign(body).toString('base64url')}`
  }

  /** The payload of a token this signer sealed, or undefined. */
  open (token: string): Record<string, unknown> | undefined {
    const [body, signature, ...rest] = token.split('.')
    if (body === undefined || signature === undefined || rest.length > 0) return undefined
    // Only the one spelling this signer writes: Buffer.from skips foreign letters and padding
    // and ignores a last letter's spare bits, so other strings would decode to the same bytes.
    const given = Buffer.from(signature, 'base64url')
    const expected = this.sign(body)
    if (given.length !== expected.length || !timingSafeEqual(given, expected) || given.toString('base64url') !== signature) return undefined
    try {
      const payload: unknown = JSON.parse(Buffer.from(body, 'base64url').toString())
      return typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? payload as Record<string, unknown> : undefined
    } catch {
      return undefined
    }
  }
}
