import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CALLER_CHANGED, CallerCache } from '../auth/caller-cache.js'
import type { DeafReason } from '../db/hearing.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Callers by key hash, kept exact by the database's change notifications. */
    callerCache: CallerCache
  }
}

const OFF_MESSAGES: Record<DeafReason, string> = {
  no_echo: 'caller cache off: the change listener is connected but does not hear notifications (a transaction-mode pooler in DATABASE_LISTEN_URL or DATABASE_URL? another database?); callers are looked up on every request until it does',
  disconnected: 'caller cache off: the change listener is not connected; callers are looked up on every request until it hears changes again',
  no_probe: 'caller cache off: no probe notification could be sent through DATABASE_URL and come back in time (the primary unreachable or its pool saturated), so nothing shows that changes are heard; callers are looked up on every request until a probe comes back',
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
  // The listener reports changes of state only, so each line here is one change.
  let wasOff = false
  const subscription = await app.database.listen(CALLER_CHANGED, {
    onNotification: () => { cache.invalidate() },
    onHeard: until => { cache.heard(until) },
    probing: () => !app.draining(),
    onState: (listening, reason) => {
      if (!listening) {
        cache.deaf(reason ?? 'disconnected')
        wasOff = true
        // Stopping: no probe is sent, so the last proof lapses; nothing is wrong.
        if (app.draining()) app.log.info({ reason }, 'caller cache off while the instance stops (no probes are sent)')
        else app.log.warn({ reason }, OFF_MESSAGES[reason ?? 'disconnected'])
      } else if (wasOff) {
        wasOff = false
        app.log.info('caller cache on: the change listener hears notifications again')
      }
    },
  })
  app.addHook('onClose', async () => { await subscription.close() })
}, { name: 'caller-cache', dependencies: ['database', 'draining'] })
