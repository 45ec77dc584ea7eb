import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import type { ClientOptions } from '../../src/db/database.js'
import { createTestDatabase, type TestDatabase } from './database.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface TestApp {
  app: FastifyInstance
  db: TestDatabase
  prisma: TestDatabase['prisma']
  config: Config
}

/**
 * The production app on a database of this test file's own, closed when the test ends.
 * Configuration goes through the same loader as production.
 */
export async function buildTestApp (t: Teardown, options: { env?: Record<string, string>, db?: ClientOptions, logStream?: NodeJS.WritableStream, routes?: (app: FastifyInstance) => void } = {}): Promise<TestApp> {
  const db = await createTestDatabase(options.db)
  const config = loadConfig({ LOG_LEVEL: options.logStream === undefined ? 'silent' : 'info', ...options.env })
  const app = await buildApp({ config, database: db, ...(options.logStream !== undefined ? { logStream: options.logStream } : {}) })
  t.teardown(async () => { await app.close() })
  options.routes?.(app)
  await app.ready()
  return { app, db, prisma: db.prisma, config }
}
