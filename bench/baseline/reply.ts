// Writing answers as the service does where it matters: the JSON content type, a strong
// ETag of the body exactly as src/plugins/caching.ts makes it, `private, no-cache`, and 304
// with no body when If-None-Match matches (a list, weak tags and `*` accepted).
import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'

const JSON_TYPE = 'application/json; charset=utf-8'

const etagOf = (body: string): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`

function matches (header: string, etag: string): boolean {
  if (header.trim() === '*') return true
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '')
  return header.split(',').some(tag => opaque(tag) === opaque(etag))
}

export function sendOk (req: IncomingMessage, res: ServerResponse, value: unknown): void {
  const body = JSON.stringify(value)
  const etag = etagOf(body)
  const ifNoneMatch = req.headers['if-none-match']
  if (ifNoneMatch !== undefined && matches(ifNoneMatch, etag)) {
    res.writeHead(304, { etag, 'cache-control': 'private, no-cache' }).end()
    return
  }
  res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), etag, 'cache-control': 'private, no-cache' }).end(body)
}

const CODES: Record<number, string> = { 400: 'invalid_request', 401: 'unauthorized', 403: 'upgrade_required', 404: 'not_found', 500: 'internal' }

/** An error in the service's shape (no request id tracking: a fixed one). */
export function sendError (res: ServerResponse, status: number, error: string, extra: Record<string, unknown> = {}): void {
  const body = JSON.stringify({ error, code: CODES[status] ?? 'internal', request_id: 'baseline', ...extra })
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) }).end(body)
}
