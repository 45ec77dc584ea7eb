import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PrismaPg } from '@prisma/adapter-pg'
import type { SqlDriverAdapterFactory, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import pg from 'pg'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import type { Config } from '../config.js'
import { PrismaClient } from '../generated/prisma/client.js'
import { claimDataDir, DataDirInUse, doorUrl, type DataDirClaim, type DataDirOwner } from './data-dir-claim.js'
import { Door } from './door.js'
import { listenOnServer, type ListenHandlers, type Subscription } from './listen.js'
import { applyMigrations } from './migrations.js'
import { installQueue, type QueueTarget } from './queue.js'
import { ReadElsewhere, replicaFailed } from './errors.js'
import type { ReplicaState, ReplicaWatcher } from './replica-state.js'
import { disconnect, displayName, ReplicaSet } from './replicas.js'
import { adapterReader, clientReader, type SqlReader, type SqlWriter } from './rows.js'
import { statementName } from './statement-names.js'

export type Prisma = PrismaClient

/** A connection pool's state, for metrics. */
export interface PoolStats { pool: string, total: number, idle: number, waiting: number }

export interface Database {
  /** The primary: writes, credential checks, and reads when no replica is up. */
  prisma: PrismaClient
  kind: 'server' | 'embedded'
  /** For the schema engine (migrations) on the same database. */
  adapterFactory: SqlMigrationAwareDriverAdapterFactory
  /** LISTEN on a channel until the subscription is closed (see listen.ts). */
  listen: (channel: string, handlers: ListenHandlers) => Promise<Subscription>
  /**
   * Runs a read on a replica that is up, else on the primary. A replica that fails to answer
   * (unreachable, closed, cancelled by replay) is taken out and the read run on the next
   * one or the primary, within the same request.
   */
  read: <T>(query: (reader: SqlReader) => Promise<T>) => Promise<T>
  /**
   * The primary through the driver adapter, without the client's query compiler: for the
   * statements of a hot path that must see the latest data or write (the webhook deliveries).
   */
  primary: SqlReader & SqlWriter
  /**
   * Whether every replica taking reads has replayed the primary up to `lsn` (a WAL position
   * the primary gave): what the primary committed before it is then what any read returns.
   * True without replicas.
   */
  replayed: (lsn: string) => Promise<boolean>
  /** The replicas and their state at the last check; empty without replicas. */
  replicas: () => ReplicaState[]
  /** Calls `watcher` on every change of a replica's state (see ReplicaSet.watch); returns the unsubscriber. */
  watchReplicas: (watcher: ReplicaWatcher) => () => void
  pools: () => PoolStats[]
  /** Where the job queue lives (db/queue.ts): this database. */
  queue: QueueTarget
  /** The embedded database's directory (absolute); undefined in memory and on a server. */
  dataDir?: string
  close: () => Promise<void>
}

type PoolConfig = Pick<Config, 'DB_POOL_MAX' | 'DB_CONNECTION_TIMEOUT_MS' | 'DB_QUERY_TIMEOUT_MS' | 'DB_STATEMENT_TIMEOUT_MS'>

export interface ClientOptions {
  /** Emit Prisma's query events (tests read the SQL): the reads too go through the client then. */
  logQueries?: boolean
  /**
   * Named prepared statements (on by default): off through an embedded database's socket,
   * where every client shares PGlite's one session and so its statement names.
   */
  statementNames?: boolean
}

/** The reads' path: Prisma's driver adapter, or its client where tests count the client's query events. */
const readerOf = (adapterFactory: SqlDriverAdapterFactory, prisma: PrismaClient, options: ClientOptions): SqlReader & SqlWriter =>
  options.logQueries === true ? clientReader(prisma) : adapterReader(async () => await adapterFactory.connect())

function client (adapter: SqlDriverAdapterFactory, options: ClientOptions): PrismaClient {
  return new PrismaClient({ adapter, ...(options.logQueries === true ? { log: [{ emit: 'event', level: 'query' }] } : {}) })
}

type ReplicaConfig = Pick<Config, 'REPLICA_MAX_LAG_MS' | 'REPLICA_CHECK_INTERVAL_MS'>

/**
 * A pool of our own (its counts feed the metrics) and a Prisma client over it. `onConnect`
 * runs on each new connection before its first use; a rejection closes it and fails what was
 * waiting for it.
 */
function serverClient (url: string, pool: PoolConfig, applicationName: string, options: ClientOptions, onConnect?: (client: pg.ClientBase) => Promise<void>) {
  const pgPool = new pg.Pool({
    ...(onConnect !== undefined ? { onConnect } : {}),
    connectionString: url,
    max: pool.DB_POOL_MAX,
    connectionTimeoutMillis: pool.DB_CONNECTION_TIMEOUT_MS,
    query_timeout: pool.DB_QUERY_TIMEOUT_MS,
    statement_timeout: pool.DB_STATEMENT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    application_name: applicationName,
  })
  // An idle connection that breaks (the server restarted) is dropped by the pool; without a
  // listener the error would end the process.
  pgPool.on('error', () => {})
  const adapterFactory = new PrismaPg(pgPool, { ...(options.statementNames !== false ? { statementNameGenerator: query => statementName(query.sql) } : {}), disposeExternalPool: true })
  const prisma = client(adapterFactory, options)
  return { pgPool, adapterFactory, prisma, reader: readerOf(adapterFactory, prisma, options) }
}

const poolStats = (name: string, p: pg.Pool): PoolStats => ({ pool: name, total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount })

/**
 * A PostgreSQL server, through node-postgres with explicit, bounded pools: the primary and,
 * with `replicaUrls`, one pool per read replica (application_name `screening-read-api:replica`).
 * The change listener connects to `listenUrl` (default: `url`), the same database reached
 * without a transaction-mode pooler; its probes are sent through the primary's pool, where
 * the data changes, so that a listener that cannot hear them is found (see listen.ts).
 */
export function openServerDatabase (url: string, config: PoolConfig & Partial<ReplicaConfig>, options: ClientOptions & { replicaUrls?: string[], listenUrl?: string } = {}): Database {
  const primary = serverClient(url, config, 'screening-read-api', options)
  const replicaSet: ReplicaSet = new ReplicaSet((options.replicaUrls ?? []).map(replicaUrl => {
    const name = displayName(replicaUrl)
    // Every connection is checked to be one to the primary's cluster before its first read.
    const { pgPool, prisma, reader } = serverClient(replicaUrl, config, 'screening-read-api:replica', options, async client => { await replicaSet.verifyConnection(client, name) })
    return { name, pool: pgPool, prisma, reader }
  }), { primary: primary.pgPool, maxLagMs: config.REPLICA_MAX_LAG_MS ?? 5000, checkIntervalMs: config.REPLICA_CHECK_INTERVAL_MS ?? 1000 })
  replicaSet.start()
  return {
    prisma: primary.prisma,
    kind: 'server',
    adapterFactory: primary.adapterFactory,
    listen: async (channel, handlers) => await listenOnServer(options.listenUrl ?? url, channel, handlers, {
      timeoutMs: config.DB_CONNECTION_TIMEOUT_MS,
      // Bounded like the round trip it starts, not by the longer query timeout: pg reads a
      // query's own query_timeout, which its types do not declare.
      probe: async payload => {
        const query: pg.QueryConfig & { query_timeout: number } = { text: 'SELECT pg_notify($1, $2)', values: [channel, payload], query_timeout: config.DB_CONNECTION_TIMEOUT_MS }
        await primary.pgPool.query(query)
      },
    }),
    read: async query => {
      for (const replica of replicaSet.usable()) {
        try {
          return await query(replica.reader)
        } catch (error) {
          if (!replicaFailed(error)) throw error
          // One that lacks what this read needs has not replayed it yet: behind, not broken.
          if (!(error instanceof ReadElsewhere)) replicaSet.markDown(replica, error)
        }
      }
      return await query(primary.reader)
    },
    replicas: () => replicaSet.states(),
    watchReplicas: watcher => replicaSet.watch(watcher),
    pools: () => [poolStats('primary', primary.pgPool), ...replicaSet.clients().map(r => poolStats(`replica ${r.name}`, r.pool))],
    queue: { kind: 'server', connectionString: url },
    primary: primary.reader,
    replayed: async lsn => await replicaSet.replayed(lsn),
    close: async () => {
      await replicaSet.close()
      await disconnect(primary.prisma, primary.pgPool)
    },
  }
}

/**
 * Wraps an open PGlite; closing the Database closes it. With `owned`, the data directory it
 * claimed and the door it serves there (closed first, released last).
 */
export function embeddedDatabase (pglite: PGlite, options: ClientOptions = {}, owned?: { dataDir: string, claim: DataDirClaim, door: Door }): Database {
  const adapterFactory = new PrismaPGlite(pglite)
  const prisma = client(adapterFactory, options)
  const reader = readerOf(adapterFactory, prisma, options)
  return {
    prisma,
    kind: 'embedded',
    adapterFactory,
    listen: async (channel, handlers) => {
      const unlisten = await pglite.listen(channel, payload => { handlers.onNotification(payload) })
      // A notification from a door client's transaction comes in that client's answer.
      const leave = owned?.door.listen(channel, payload => { handlers.onNotification(payload) })
      // In the process: what is notified is heard for as long as the database is open.
      handlers.onHeard(Infinity)
      handlers.onState(true)
      return { close: async () => { leave?.(); await unlisten() } }
    },
    read: async query => await query(reader),
    replicas: () => [],
    watchReplicas: () => () => {},
    pools: () => [],
    queue: { kind: 'embedded', pglite },
    primary: reader,
    replayed: async () => true,
    ...(owned !== undefined ? { dataDir: owned.dataDir } : {}),
    close: async () => {
      await owned?.door.close()
      await prisma.$disconnect()
      await pglite.close()
      await owned?.claim.release()
    },
  }
}

/**
 * PostgreSQL embedded in the process (PGlite), so that a newcomer needs nothing installed.
 * `dataDir` undefined keeps it in memory. Migrations are applied on open. A directory is
 * claimed first (data-dir-claim.ts) and served on its socket (door.ts); one that a live
 * process owns is DataDirInUse.
 */
export async function openEmbeddedDatabase (dataDir: string | undefined, options: ClientOptions = {}): Promise<Database & { created: boolean }> {
  const opened = await openOrFindOwner(dataDir, options)
  if ('owner' in opened) throw new DataDirInUse(opened.dataDir, opened.owner)
  return opened
}

async function openOrFindOwner (dataDir: string | undefined, options: ClientOptions): Promise<(Database & { created: boolean }) | { dataDir: string, owner: DataDirOwner | undefined }> {
  let owned
  if (dataDir !== undefined) {
    dataDir = resolve(dataDir)
    const door = new Door()
    const claim = await claimDataDir(dataDir, socket => { door.accept(socket) })
    if ('owner' in claim) return { dataDir, owner: claim.owner }
    owned = { dataDir, claim, door }
  }
  const created = dataDir === undefined || !existsSync(join(dataDir, 'PG_VERSION'))
  let database
  try {
    const pglite = new PGlite(dataDir)
    database = embeddedDatabase(pglite, options, owned)
    await applyMigrations(database.adapterFactory)
    await installQueue(database.queue)
    owned?.door.serve(pglite)
  } catch (error) {
    if (database !== undefined) await database.close()
    else { await owned?.door.close(); await owned?.claim.release() }
    throw error
  }
  return { ...database, created }
}

export interface OpenOptions extends ClientOptions {
  /**
   * An embedded data directory a live process owns: 'refuse' (DataDirInUse, the default: a
   * service starting beside it) or 'door' (its database through its socket: commands that
   * only write; `throughDoor` then says so, with the owner when it is known).
   */
  beside?: 'refuse' | 'door'
}

export async function openDatabase (config: Config, options: OpenOptions = {}): Promise<Database & { created: boolean, throughDoor?: { owner: DataDirOwner | undefined } }> {
  if (config.DATABASE_URL !== undefined) {
    const replicaUrls = config.DATABASE_REPLICA_URLS.split(',').filter(Boolean)
    const listenUrl = config.DATABASE_LISTEN_URL ?? config.DATABASE_URL
    return { ...openServerDatabase(config.DATABASE_URL, config, { ...options, replicaUrls, listenUrl }), created: false }
  }
  const opened = await openOrFindOwner(config.DATA_DIR, options)
  if (!('owner' in opened)) return opened
  if (options.beside !== 'door') throw new DataDirInUse(opened.dataDir, opened.owner)
  // The owner migrated it. A small pool: its exchanges are served one at a time anyway; a
  // connection may wait for an owner still opening it (a first start's migrations: seconds).
  const database = openServerDatabase(doorUrl(opened.dataDir), { ...config, DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: Math.max(config.DB_CONNECTION_TIMEOUT_MS, 30_000) }, { ...options, statementNames: false })
  return { ...database, created: false, throughDoor: { owner: opened.owner } }
}
