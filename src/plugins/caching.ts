import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

// Our own rather than @fastify/etag: that plugin tags every response, errors included (a
// 404 would carry an ETag), and compares If-None-Match as one opaque string, where RFC 9110
// allows a list and `*`.

/** Whether an If-None-Match header value matches the current ETag (weak comparison). */
export function ifNoneMatchMatches (header: string, etag: string): boolean {
  if (header.trim() === '*') return true
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '')
  return header.split(',').some(tag => opaque(tag) === opaque(etag))
}

/**
 * Conditional GETs: every 200 carries a strong ETag computed from its body (so it changes
 * whenever any field does); a matching If-None-Match gets 304 with no body. Both carry
 * `Cache-Control: private, no-cache`: the data is per caller and changes, so clients
 * revalidate every time.
 */
export default fp(async function cachingPlugin (app: FastifyInstance) {
  app.addHook('onSend', async (request, reply, payload) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200 || typeof payload !== 'string') return payload
    const etag = `"${createHash('sha256').update(payload).digest('base64url').slice(0, 27)}"`
    reply.header('etag', etag).header('cache-control', 'private, no-cache')
    const header = request.headers['if-none-match']
    if (header !== undefined && ifNoneMatchMatches(header, etag)) {
      reply.code(304)
      return ''
    }
    return payload
  })
}, { name: 'caching' })
