import type { FastifyPluginAsync } from 'fastify'
import { databaseUnavailable } from '../errors.js'

const READY_TIMEOUT_MS = 1000

/** Liveness and readiness, without credentials and outside the documented API. */
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
    return { status: 'ok' }
  })
}

export default healthRoutes
