import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Database } from '../db/database.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The one database handle: raw statements through `primary` or `read`, the query builder through `prisma`. */
    database: Database
  }
}

/**
 * Hands the app its database, which the app then owns: closing the app closes it. Every
 * change of a read replica's state is logged at warn: each one moves reads to or from it.
 */
export default fp(async function databasePlugin (app: FastifyInstance, { database }: { database: Database }) {
  app.decorate('database', database)
  const unwatch = database.watchReplicas((state, previous) => {
    const lagMs = state.lagMs === null ? null : Math.round(state.lagMs)
    app.log.warn({ replica: state.name, status: state.status, reason: state.reason, previous: previous.status, lag_ms: lagMs },
      `read replica ${state.name}: ${previous.status} -> ${state.status}${state.reason === null ? '' : ` (${state.reason})`}${state.status === 'up' ? ', takes reads' : ', reads go elsewhere'}`)
  })
  app.addHook('onClose', async () => { unwatch(); await database.close() })
}, { name: 'database' })
