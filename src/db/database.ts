import type { SqlDriverAdapterFactory, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import type { Config } from '../config.js'
import { PrismaClient } from '../generated/prisma/client.js'
import type { ListenHandlers, Subscription } from './listen.js'
import type { QueueTarget } from './queue.js'
import type { ReplicaState, ReplicaWatcher } from './replica-state.js'
import { adapterReader, clientReader, type SqlReader, type SqlWriter } from './sql-reader.js'

// What the service holds of its database, whichever it is (a PostgreSQL server:
// server-database.ts; the embedded one: embedded-database.ts; which one: open-database.ts),
// and the Prisma client both make.

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

export type PoolConfig = Pick<Config, 'DB_POOL_MAX' | 'DB_CONNECTION_TIMEOUT_MS' | 'DB_QUERY_TIMEOUT_MS' | 'DB_STATEMENT_TIMEOUT_MS'>

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
export const readerOf = (adapterFactory: SqlDriverAdapterFactory, prisma: PrismaClient, options: ClientOptions): SqlReader & SqlWriter =>
  options.logQueries === true ? clientReader(prisma) : adapterReader(async () => await adapterFactory.connect())

export function client (adapter: SqlDriverAdapterFactory, options: ClientOptions): PrismaClient {
  return new PrismaClient({ adapter, ...(options.logQueries === true ? { log: [{ emit: 'event', level: 'query' }] } : {}) })
}
