import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { openServerDatabase, type ClientOptions, type Database } from '../../src/db/database.js'
import { assertContract } from './contract.js'
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
 * Configuration goes through the same loader as production. On a server the app connects
 * as the API's restricted role, with the pool settings of the configuration; `prisma` (for
 * fixtures) is the owner's.
 */
export async function buildTestApp (t: Teardown, options: { env?: Record<string, string>, db?: ClientOptions, logStream?: NodeJS.WritableStream, routes?: (app: FastifyInstance) => void } = {}): Promise<TestApp> {
  const db = await createTestDatabase(options.db)
  const config = loadConfig({ LOG_LEVEL: options.logStream === undefined ? 'silent' : 'info', ...options.env })
  const database = apiDatabase(db, config, options.db)
  const app = await buildApp({ config, database, ...(options.logStream !== undefined ? { logStream: options.logStream } : {}) })
  t.teardown(async () => { await app.close(); await db.close() })
  options.routes?.(app)
  await app.ready()
  validateEveryResponse(app)
  return { app, db, prisma: db.prisma, config }
}

/** The database as the app under test gets it (closing it leaves the test's own open). */
export function apiDatabase (db: TestDatabase, config: Config, options: ClientOptions = {}): Database {
  return db.apiUrl !== undefined ? openServerDatabase(db.apiUrl, config, options) : { ...db, close: async () => {} }
}

/** Wraps inject so that every response a test receives is checked against the OpenAPI document. */
function validateEveryResponse (app: FastifyInstance): void {
  const inject = app.inject.bind(app) as (options: InjectOptions) => Promise<LightMyRequestResponse>
  const validating = async (options: InjectOptions): Promise<LightMyRequestResponse> => {
    const res = await inject(options)
    const url = typeof options === 'string' ? options : String(options.url ?? options.path ?? '/')
    const method = typeof options === 'string' ? 'GET' : String(options.method ?? 'GET').toUpperCase()
    assertContract({ method, url, statusCode: res.statusCode, headers: res.headers, body: res.body })
    return res
  }
  Object.defineProperty(app, 'inject', { value: validating, configurable: true })
  Object.defineProperty(app, 'validatesResponses', { value: true })
}
