import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import { bearerMatcher } from '../auth/bearer.js'
import { sql } from '../db/sql.js'
import { clientReader, type SqlReader } from '../db/sql-reader.js'
import { databaseUnavailable, shuttingDown } from '../errors.js'

const READY_TIMEOUT_MS = 1000

export interface HealthOptions {
  /** METRICS_TOKEN: the bearer token that also unlocks readiness's detail. */
  metricsToken: string | undefined
}

/**
 * Liveness and readiness, without credentials and outside the documented API. Ready means
 * the primary answers (it serves everything when no replica is up). Its detail (each
 * database by host:port/name, with its state at the last check) names internal hosts, so it
 * is only for the bearer of METRICS_TOKEN, like /metrics: load balancers and the proxy need
 * the status alone. A missing or wrong token gets the status, not a 401, so that a health
 * check never fails over a header.
 */
const healthRoutes: FastifyPluginAsync<HealthOptions> = async (app, { metricsToken }) => {
  const primary = clientReader(app.database.prisma)
  const operator = metricsToken === undefined ? () => false : bearerMatcher(metricsToken)

  app.get('/live', { schema: { hide: true } }, async () => ({ status: 'ok' }))

  app.get('/ready', { schema: { hide: true } }, async (request, reply) => {
    // A stopping instance is not ready, at once: the proxy's active check takes it out of
    // rotation while it still answers what arrives on its open connections.
    if (app.draining()) throw shuttingDown()
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new Error('readiness query timed out')) }, READY_TIMEOUT_MS)
    })
    try {
      await Promise.race([databaseAnswers(primary), timeout])
    } catch (err) {
      app.log.warn({ err }, 'database not ready')
      throw databaseUnavailable()
    } finally {
      clearTimeout(timer)
    }
    // The answer depends on the header: no shared cache may give one caller's to another.
    reply.header('vary', 'authorization').header('cache-control', 'no-store')
    if (!operator(request.headers.authorization)) return { status: 'ok' }
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

const AnswerRow = Type.Object({ answers: Type.Integer() })

/** The readiness check's statement: the primary answers, through the client every write uses. */
export async function databaseAnswers (db: SqlReader): Promise<void> {
  await db.rows(AnswerRow, sql`SELECT 1 AS answers`)
}
