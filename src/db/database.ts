import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PrismaPg } from '@prisma/adapter-pg'
import type { SqlDriverAdapterFactory, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import type { Config } from '../config.js'
import { PrismaClient } from '../generated/prisma/client.js'
import { listenOnServer, type ListenHandlers, type Subscription } from './listen.js'
import { applyMigrations } from './migrations.js'
import { statementName } from './statement-names.js'

export type Prisma = PrismaClient

export interface Database {
  prisma: PrismaClient
  kind: 'server' | 'embedded'
  /** For the schema engine (migrations) on the same database. */
  adapterFactory: SqlMigrationAwareDriverAdapterFactory
  /** LISTEN on a channel until the subscription is closed (see listen.ts). */
  listen: (channel: string, handlers: ListenHandlers) => Promise<Subscription>
  close: () => Promise<void>
}

type PoolConfig = Pick<Config, 'DB_POOL_MAX' | 'DB_CONNECTION_TIMEOUT_MS' | 'DB_QUERY_TIMEOUT_MS' | 'DB_STATEMENT_TIMEOUT_MS'>

export interface ClientOptions {
  /** Emit Prisma's query events (tests read the SQL). */
  logQueries?: boolean
}

function client (adapter: SqlDriverAdapterFactory, options: ClientOptions): PrismaClient {
  return new PrismaClient({ adapter, ...(options.logQueries === true ? { log: [{ emit: 'event', level: 'query' }] } : {}) })
}

/** A PostgreSQL server, through node-postgres with an explicit, bounded pool. */
export function openServerDatabase (url: string, pool: PoolConfig, options: ClientOptions = {}): Database {
  const adapterFactory = new PrismaPg({
    connectionString: url,
    max: pool.DB_POOL_MAX,
    connectionTimeoutMillis: pool.DB_CONNECTION_TIMEOUT_MS,
    query_timeout: pool.DB_QUERY_TIMEOUT_MS,
    statement_timeout: pool.DB_STATEMENT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    application_name: 'screening-read-api',
  }, { statementNameGenerator: query => statementName(query.sql) })
  const prisma = client(adapterFactory, options)
  return {
    prisma,
    kind: 'server',
    adapterFactory,
    listen: async (channel, handlers) => await listenOnServer(url, channel, handlers, pool.DB_CONNECTION_TIMEOUT_MS),
    close: async () => { await prisma.$disconnect() },
  }
}

/** Wraps an open PGlite; closing the Database closes it. */
export function embeddedDatabase (pglite: PGlite, options: ClientOptions = {}): Database {
  const adapterFactory = new PrismaPGlite(pglite)
  const prisma = client(adapterFactory, options)
  return {
    prisma,
    kind: 'embedded',
    adapterFactory,
    listen: async (channel, handlers) => {
      const unlisten = await pglite.listen(channel, payload => { handlers.onNotification(payload) })
      handlers.onState(true)
      return { close: unlisten }
    },
    close: async () => {
      await prisma.$disconnect()
      await pglite.close()
    },
  }
}

/**
 * PostgreSQL embedded in the process (PGlite), so that a newcomer needs nothing installed.
 * `dataDir` undefined keeps it in memory. Migrations are applied on open.
 */
export async function openEmbeddedDatabase (dataDir: string | undefined, options: ClientOptions = {}): Promise<Database & { created: boolean }> {
  let created = true
  if (dataDir !== undefined) {
    dataDir = resolve(dataDir)
    created = !existsSync(join(dataDir, 'PG_VERSION'))
    await mkdir(dataDir, { recursive: true })
  }
  const database = embeddedDatabase(new PGlite(dataDir), options)
  try {
    await applyMigrations(database.adapterFactory)
  } catch (error) {
    await database.close()
    throw error
  }
  return { ...database, created }
}

export async function openDatabase (config: Config, options: ClientOptions = {}): Promise<Database & { created: boolean }> {
  if (config.DATABASE_URL !== undefined) {
    return { ...openServerDatabase(config.DATABASE_URL, config, options), created: false }
  }
  return await openEmbeddedDatabase(config.DATA_DIR, options)
}
