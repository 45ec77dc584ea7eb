import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CALLER_CHANGED, CallerCache } from '../auth/caller-cache.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Callers by key hash, kept exact by the database's change notifications. */
    callerCache: CallerCache
  }
}

/**
 * The caller cache and what keeps it honest: a LISTEN on the channel the triggers notify.
 * Each instance listens for itself, so a change made anywhere clears every instance's cache.
 * `ttlMs` 0 turns the cache off (and listens to nothing).
 */
export default fp(async function callerCachePlugin (app: FastifyInstance, { ttlMs }: { ttlMs: number }) {
  const cache = new CallerCache(ttlMs)
  app.decorate('callerCache', cache)
  if (ttlMs === 0) return
  const subscription = await app.database.listen(CALLER_CHANGED, {
    onNotification: () => { cache.invalidate() },
    onState: listening => {
      cache.setListening(listening)
      if (!listening) app.log.warn('not hearing changes to API keys and plans: callers are looked up on every request until the listener reconnects')
    },
  })
  app.addHook('onClose', async () => { await subscription.close() })
}, { name: 'caller-cache', dependencies: ['prisma'] })
