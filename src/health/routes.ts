import type { FastifyPluginAsync } from 'fastify'
import { databaseUnavailable } from '../errors.js'

const READY_TIMEOUT_MS = 1000

/**
 * Liveness and readiness, without credentials and outside the documented API. Ready means
 * the primary answers (it serves everything when no replica is up); the replicas are listed
 * with their state at the last check, so an operator sees which databases are reachable.
 */
const healthRoutes: FastifyPluginAsync = async (app) => {
  app.get('/live', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get('/ready', { schema: { hide: true } }, async () => {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new Error('readiness query timed out')) }, READY_TIMEOUT_MS)
    })
    try {
      await Promise.race([app.prisma.$queryRaw`SELECT 1`, timeout])
    } catch (err) {
      app.log.warn({ err }, 'database not ready')
      throw databaseUnavailable()
    } finally {
      clearTimeout(timer)
    }
    return {
      status: 'ok',
      databases: {
        primary: 'up',
        replicas: app.database.replicas().map(r => ({ name: r.name, status: r.status, reason: r.reason, lag_ms: r.lagMs === null ? null : Math.round(r.lagMs) })),
      },
      // Off is still ready: every request looks its caller up instead.
      caller_cache: { status: app.callerCache.enabled ? 'on' : 'off', reason: app.callerCache.offReason },
    }
  })
}

export default healthRoutes
