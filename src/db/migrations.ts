import { readdir, readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import { openSchemaEngine, type SchemaEngine } from './schema-engine.js'

// Prisma Migrate's own layout, so `prisma migrate deploy` works on the same folder for
// anyone who has the native engine.
const root = resolve(fileURLToPath(import.meta.url), '../../..')
export const schemaPath = join(root, 'prisma/schema.prisma')
export const migrationsDir = join(root, 'prisma/migrations')

const noFilters = { externalTables: [], externalEnums: [] }

export async function readSchema (): Promise<{ path: string, content: string }> {
  return { path: 'schema.prisma', content: await readFile(schemaPath, 'utf8') }
}

export async function readMigrations (dir = migrationsDir): Promise<Parameters<SchemaEngine['applyMigrations']>[0]['migrationsList']> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
  const names = entries.filter(e => e.isDirectory()).map(e => e.name).sort()
  const lockfile = await readFile(join(dir, 'migration_lock.toml'), 'utf8').catch(() => null)
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: lockfile },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(names.map(async name => ({
      path: name,
      migrationFile: {
        path: 'migration.sql',
        content: await readFile(join(dir, name, 'migration.sql'), 'utf8')
          .then(value => ({ tag: 'ok' as const, value }), (error: Error) => ({ tag: 'error' as const, value: error.message })),
      },
    }))),
  }
}

type Adapter = Awaited<ReturnType<SqlMigrationAwareDriverAdapterFactory['connect']>>

/** How migrations wait for locks: see wholeScripts. */
export interface LockPolicy {
  /** Longest one attempt waits for a lock (PostgreSQL's lock_timeout). */
  lockTimeoutMs: number
  /** How long attempts that could not get their locks are retried. */
  retryForMs: number
  /** Told of each attempt given up (the command prints it). */
  onRetry?: (attempt: number, error: Error) => void
}

const NO_RETRY: LockPolicy = { lockTimeoutMs: 0, retryForMs: 0 }
const LOCK_NOT_AVAILABLE = '55P03'
const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

/**
 * node-postgres's adapter runs a migration script by splitting it on every semicolon, which
 * cuts function bodies (triggers) and comments apart. Send the script whole instead, in one
 * simple-protocol query, as Prisma's native engine does (PostgreSQL runs it as one implicit
 * transaction). PGlite's adapter runs scripts whole but does not wait for them: the engine
 * recorded a migration as finished before it ran, and its error surfaced later as an
 * unhandled rejection. Here it is awaited, and its error fails the migration.
 *
 * With a lock policy, the script waits at most `lockTimeoutMs` for each lock: a lock request
 * that waits (behind a long reader, a pg_dump) makes every later request of that table queue
 * behind it, API reads included, so it gives up quickly, the script's transaction rolls back
 * whole, and it is tried again after a pause, until `retryForMs`. A long reader delays the
 * migration, never the API for longer than `lockTimeoutMs`.
 */
function wholeScripts (adapter: Adapter, policy: LockPolicy): Adapter {
  const onError = (adapter as unknown as { onError: (error: unknown) => never }).onError.bind(adapter)
  const pglite = (adapter as unknown as { client?: { exec?: (sql: string) => Promise<unknown> } }).client
  if (adapter.adapterName === 'pglite-prisma-adapter' && typeof pglite?.exec === 'function') {
    adapter.executeScript = async (script: string) => { await pglite.exec!(script).catch(onError) }
    return adapter
  }
  const pool = (adapter as unknown as { client?: { query?: (sql: string) => Promise<unknown> } }).client
  if (adapter.adapterName !== '@prisma/adapter-pg' || typeof pool?.query !== 'function') return adapter
  // SET LOCAL: for the script's own transaction, not the engine's bookkeeping after it.
  const prefix = policy.lockTimeoutMs > 0 ? `SET LOCAL lock_timeout = ${Math.floor(policy.lockTimeoutMs)};\n` : ''
  adapter.executeScript = async (script: string) => {
    const deadline = Date.now() + policy.retryForMs
    for (let attempt = 1; ; attempt++) {
      try {
        await pool.query!(prefix + script)
        return
      } catch (error) {
        const retry = (error as { code?: string }).code === LOCK_NOT_AVAILABLE && Date.now() < deadline
        if (!retry) onError(error)
        policy.onRetry?.(attempt, error as Error)
        await sleep(Math.min(5_000, 250 * 2 ** Math.min(attempt - 1, 5)))
      }
    }
  }
  return adapter
}

/**
 * Runs `use` with an engine, then disposes of every connection the engine opened: it does
 * not do so itself, and an open pool would keep the process alive.
 */
async function withEngine<T> (factory: SqlMigrationAwareDriverAdapterFactory, use: (engine: SchemaEngine) => Promise<T>, policy: LockPolicy = NO_RETRY): Promise<T> {
  const opened: Array<{ dispose: () => Promise<void> }> = []
  const tracked: SqlMigrationAwareDriverAdapterFactory = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => { const a = wholeScripts(await factory.connect(), policy); opened.push(a); return a },
    connectToShadowDb: async () => { const a = wholeScripts(await factory.connectToShadowDb(), policy); opened.push(a); return a },
  }
  const engine = await openSchemaEngine(tracked, await readSchema())
  try {
    return await use(engine)
  } finally {
    engine.free()
    await Promise.all(opened.map(async a => { await a.dispose() }))
  }
}

/**
 * Applies the migrations not yet applied, recording them in `_prisma_migrations`; those of
 * `dir` if given (a test replays an earlier state of the folder); waiting for locks as
 * `policy` says (db:migrate: a short lock_timeout, retried).
 */
export async function applyMigrations (factory: SqlMigrationAwareDriverAdapterFactory, dir = migrationsDir, policy: LockPolicy = NO_RETRY): Promise<string[]> {
  const migrationsList = await readMigrations(dir)
  return await withEngine(factory, async engine =>
    (await engine.applyMigrations({ migrationsList, filters: noFilters })).appliedMigrationNames, policy)
}

/**
 * The SQL that would take a database built by the migrations to the schema; empty when they
 * agree. The engine replays the migrations on a shadow database: an in-memory embedded one,
 * since the answer does not depend on any real database.
 */
export async function diffMigrationsToSchema (): Promise<string> {
  const migrationsList = await readMigrations()
  const schema = await readSchema()
  const shadow = new PGlite()
  try {
    return await withEngine(new PrismaPGlite(shadow), async engine => {
      const result = await engine.diff({
        from: { tag: 'migrations', ...migrationsList },
        to: { tag: 'schemaDatamodel', files: [schema] },
        script: true,
        exitCode: null,
        filters: noFilters,
      })
      return (result.stdout ?? '').replace(/^-- This is an empty migration\.\s*$/m, '').trim()
    })
  } finally {
    await shadow.close()
  }
}
