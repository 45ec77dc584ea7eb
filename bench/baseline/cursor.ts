// The service's cursor format, re-implemented (the baseline imports nothing from src/):
// base64url(JSON {o, s, t, i, x}) + "." + base64url(first 16 bytes of HMAC-SHA256(body)).
// Same secret, same position: the same cursor, byte for byte. No status filter here (s null).
// `x` is what the walk's pages could all see (a pg_snapshot's text), `g` the change log's
// generation and `h` the database history (the first 16 hex digits of the SHA-256 of
// database_history()) its first page read; the last page's sync token is base64url(JSON
// {k: "sync", o, x, g, h}), signed alike.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

export interface Position { createdAt: string, id: string, seen?: string, generation?: number, history?: string }

/** The history as tokens carry it. */
export const historyId = (described: string): string => createHash('sha256').update(described).digest('hex').slice(0, 16)

/** Snapshots `xmin:xmax:xip,…`: visible in the result exactly when visible in both; at most 6 in-progress ids (xmax lowered to the 7th). */
export function seenByBoth (a: string | undefined, b: string): string {
  const parse = (text: string): { xmin: bigint, xmax: bigint, xip: bigint[] } => {
    const [xmin = '', xmax = '', xip = ''] = text.split(':')
    return { xmin: BigInt(xmin), xmax: BigInt(xmax), xip: xip === '' ? [] : xip.split(',').map(BigInt) }
  }
  let { xmin, xmax, xip } = parse(b)
  if (a !== undefined) {
    const other = parse(a)
    xmin = other.xmin < xmin ? other.xmin : xmin
    xmax = other.xmax < xmax ? other.xmax : xmax
    xip = [...new Set([...other.xip, ...xip])]
  }
  xip = xip.filter(x => x < xmax).sort((p, q) => p < q ? -1 : p > q ? 1 : 0)
  if (xip.length > 6) { xmax = xip[6]!; xip = xip.slice(0, 6) }
  return `${xmin}:${xmax}:${xip.join(',')}`
}

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
    return this.seal({ o: organizationId, s: null, t: position.createdAt, i: position.id, ...(position.seen !== undefined ? { x: position.seen, g: position.generation, h: position.history } : {}) })
  }

  syncToken (organizationId: string, seen: string, generation: number, history: string): string {
    return this.seal({ k: 'sync', o: organizationId, x: seen, g: generation, h: history })
  }

  private seal (payload: object): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url')
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
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as { o?: unknown, s?: unknown, t?: unknown, i?: unknown, x?: unknown, g?: unknown, h?: unknown }
      if (payload.o !== organizationId || payload.s !== null || typeof payload.t !== 'string' || typeof payload.i !== 'string') return undefined
      if (Number.isNaN(Date.parse(payload.t)) || (payload.x !== undefined && (typeof payload.x !== 'string' || !/^\d+:\d+:(\d+(,\d+)*)?$/.test(payload.x)))) return undefined
      if (payload.x !== undefined && (!Number.isSafeInteger(payload.g) || typeof payload.h !== 'string')) return undefined
      return { createdAt: payload.t, id: payload.i, ...(typeof payload.x === 'string' ? { seen: payload.x, generation: payload.g as number, history: payload.h as string } : {}) }
    } catch {
      return undefined
    }
  }
}
