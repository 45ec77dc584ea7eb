import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { type ClientOptions, type Database } from '../../src/db/database.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import type { Lookup } from '../../src/webhooks/egress.js'
import { assertContract } from './contract.js'
import { createTestDatabase, type TestDatabase } from './database.js'
import { refusedConnections } from './no-egress.js'

interface Teardown { teardown: (fn: () => unknown) => void }

/** The key that encrypts webhook secrets in tests (WEBHOOK_SECRET_KEY's form: 32 bytes, base64). */
export const TEST_WEBHOOK_SECRET_KEY = Buffer.alloc(32, 7).toString('base64')

/**
 * The resolver of the apps under test: `localhost` is 127.0.0.1, every other name fails at
 * once. No DNS query ever leaves the machine, whatever name a test (or the fuzzer) sends.
 */
export const localLookup: Lookup = ((hostname: string, options: unknown, callback?: unknown) => {
  const cb = (typeof options === 'function' ? options : callback) as (error: NodeJS.ErrnoException | null, address?: unknown, family?: number) => void
  const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true
  if (hostname !== 'localhost') {
    process.nextTick(() => { cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (tests resolve localhost only)`), { code: 'ENOTFOUND' })) })
    return
  }
  process.nextTick(() => { if (all) cb(null, [{ address: '127.0.0.1', family: 4 }]); else cb(null, '127.0.0.1', 4) })
}) as Lookup

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
export async function buildTestApp (t: Teardown, options: { env?: Record<string, string>, db?: ClientOptions, logStream?: NodeJS.WritableStream, routes?: (app: FastifyInstance) => void, webhookLookup?: Lookup } = {}): Promise<TestApp> {
  const db = await createTestDatabase(options.db)
  const config = loadConfig({ LOG_LEVEL: options.logStream === undefined ? 'silent' : 'info', WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY, ...options.env })
  const database = apiDatabase(db, config, options.db)
  const app = await buildApp({ config, database, webhookLookup: options.webhookLookup ?? localLookup, ...(options.logStream !== undefined ? { logStream: options.logStream } : {}) })
  t.teardown(async () => {
    await app.close()
    await db.close()
    // A connection off the machine the app tried (no-egress.ts refused it): the file fails.
    if (refusedConnections.length > 0) throw new Error(`connections off this machine were tried and refused: ${[...new Set(refusedConnections)].join(', ')}`)
  })
  options.routes?.(app)
  await app.ready()
  validateEveryResponse(app)
  return { app, db, prisma: db.prisma, config }
}

/**
 * A second app on `base`'s database, configured by `env` (as buildTestApp's), its own workers
 * off: another instance to compare with, e.g. one that keeps no analytics answers.
 */
export async function sameDatabaseApp (t: Teardown, base: TestApp, env: Record<string, string>): Promise<FastifyInstance> {
  const config = loadConfig({ LOG_LEVEL: 'silent', WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY, ...env, SUMMARY_FOLD_INTERVAL_MS: '0', SYNC_PRUNE_INTERVAL_MS: '0', WEBHOOK_WORKER: 'off' })
  const app = await buildApp({ config, database: apiDatabase(base.db, config), webhookLookup: localLookup })
  t.teardown(async () => { await app.close() })
  await app.ready()
  validateEveryResponse(app)
  return app
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
