import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import type { Config } from '../config.js'
import { client, readerOf, type ClientOptions, type Database, type PoolConfig, type PoolStats } from './database.js'
import { ReadElsewhere, replicaFailed } from './errors.js'
import { listenOnServer } from './listen.js'
import { disconnect, displayName, ReplicaSet } from './replicas.js'
import { statementName } from './statement-names.js'
import { tracedAdapterFactory } from '../telemetry/traced-adapter.js'

// A PostgreSQL server as the service's Database: bounded pools of our own, read replicas,
// the change listener.

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
    // No JIT: the API's statements take under a millisecond, and compiling one took 35 ms
    // when the planner's cost passed jit_above_cost (a batch of 50 jobs among large ones).
    options: '-c jit=off',
  })
  // An idle connection that breaks (the server restarted) is dropped by the pool; without a
  // listener the error would end the process.
  pgPool.on('error', () => {})
  const adapterFactory = tracedAdapterFactory(new PrismaPg(pgPool, { ...(options.statementNames !== false ? { statementNameGenerator: query => statementName(query.sql) } : {}), disposeExternalPool: true }))
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
