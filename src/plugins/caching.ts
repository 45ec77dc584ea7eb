import etag from '@fastify/etag'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Conditional GETs: an ETag computed from the body of every 200 (so it changes whenever any
 * field does), 304 with no body on a matching If-None-Match, and `private, no-cache`: the
 * data is per caller and changes, so clients revalidate every time.
 */
export default fp(async function cachingPlugin (app: FastifyInstance) {
  await app.register(etag, { algorithm: 'sha1' })
  app.addHook('onSend', async (request, reply) => {
    if (request.method === 'GET' && (reply.statusCode === 200 || reply.statusCode === 304)) {
      reply.header('cache-control', 'private, no-cache')
    }
  })
}, { name: 'caching' })
