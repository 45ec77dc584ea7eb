import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

// Our own rather than @fastify/etag: that plugin tags every response, errors included (a
// 404 would carry an ETag), and compares If-None-Match as one opaque string, where RFC 9110
// allows a list and `*`.

const CACHE_CONTROL = 'private, no-cache'

/** Whether an If-None-Match header value matches the current ETag (weak comparison). */
export function ifNoneMatchMatches (header: string, etag: string): boolean {
  if (header.trim() === '*') return true
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '')
  return header.split(',').some(tag => opaque(tag) === opaque(etag))
}

/** A strong ETag naming `text`: a body, or what identifies one (see versionedEtag). */
export const etagOf = (text: string | Buffer): string => `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`

/**
 * An ETag from what determines a body rather than from the body itself, so that a route can
 * answer 304 without building it: a version of the data and every input of the answer.
 */
export const versionedEtag = (parts: string[]): string => etagOf(parts.join('\u0000'))

/** The 304 of a route that checked If-None-Match itself (versionedEtag). */
export function notModified (reply: FastifyReply, etag: string): FastifyReply {
  return reply.code(304).header('etag', etag).header('cache-control', CACHE_CONTROL).send()
}

/**
 * A 304 describes the 200 it stands for without carrying a body: no Content-Type, and no
 * Content-Length (RFC 9110 §15.4.5 allows one only if it equals the 200's, and a route
 * answering from a version does not know it). A null payload is what makes Fastify leave
 * Content-Length out; the JSON serializer had already set the type.
 */
function bodiless (request: FastifyRequest, reply: FastifyReply): null | Readable {
  reply.removeHeader('content-type')
  reply.removeHeader('content-length')
  // Fastify's HEAD hook runs after this one and sets a Content-Length from any payload but
  // a stream (and fails on null): an empty stream makes it leave the header out.
  return request.method === 'HEAD' ? Readable.from([]) : null
}

/**
 * Conditional GETs: every 200 carries a strong ETag, the route's own (set before the body is
 * sent: versionedEtag) or else one computed from its body (so it changes whenever any field
 * does); a matching If-None-Match gets 304 with no body. Both carry `Cache-Control: private,
 * no-cache`: the data is per caller and changes, so clients revalidate every time.
 */
export default fp(async function cachingPlugin (app: FastifyInstance) {
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode === 304) return bodiless(request, reply)
    // A write's answer (a new endpoint's secret among them) is no one's to keep.
    if (request.method !== 'GET' && request.method !== 'HEAD' && reply.statusCode >= 200 && reply.statusCode < 300 && reply.statusCode !== 204) reply.header('cache-control', 'no-store')
    // A route may have set its ETag before an error replaced its answer.
    if (reply.statusCode !== 200) reply.removeHeader('etag')
    if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200 || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) return payload
    const own = reply.getHeader('etag')
    const etag = typeof own === 'string' ? own : etagOf(payload)
    reply.header('etag', etag).header('cache-control', CACHE_CONTROL)
    const header = request.headers['if-none-match']
    if (header !== undefined && ifNoneMatchMatches(header, etag)) {
      reply.code(304)
      return bodiless(request, reply)
    }
    return payload
  })
}, { name: 'caching' })
