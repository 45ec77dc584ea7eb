import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Database, Prisma } from '../db/database.js'

declare module 'fastify' {
  interface FastifyInstance {
    prisma: Prisma
    database: Database
  }
}

/** Hands the app its database, which the app then owns: closing the app closes it. */
export default fp(async function prismaPlugin (app: FastifyInstance, { database }: { database: Database }) {
  app.decorate('database', database)
  app.decorate('prisma', database.prisma)
  app.addHook('onClose', async () => { await database.close() })
}, { name: 'prisma' })
