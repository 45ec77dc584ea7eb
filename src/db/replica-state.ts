import type pg from 'pg'
import type { PrismaClient } from '../generated/prisma/client.js'
import type { SqlReader } from './sql-reader.js'

// What the service knows of each read replica: how it reaches it, and the state its checks
// found (replicas.ts), which reads, metrics and /health/ready follow.

export interface ReplicaClient {
  /** host:port/database, never credentials: for logs, metrics and /health/ready. */
  name: string
  pool: pg.Pool
  prisma: PrismaClient
  /** The reads' path to it (rows.ts). */
  reader: SqlReader
}

export type ReplicaStatus = 'unknown' | 'up' | 'lagging' | 'down'

/**
 * Why a replica is down: it does not answer; a read on it failed (until the next check);
 * it is not a standby any more (promoted, or detached: a copy that diverges from the
 * primary from then on); it replays another timeline than the primary's (it follows a
 * former primary, or has not caught up with a failover); it belongs to another cluster
 * than the primary's (its `system_identifier` differs: a standby of a restored copy, of a
 * staging cluster, a URL that points elsewhere); its URL names another database of the
 * primary's cluster (its database's oid differs); or which cluster it belongs to cannot be
 * told yet (the primary's identifier was never read: no replica is trusted until it is).
 */
export type ReplicaDownReason = 'unreachable' | 'read_failed' | 'not_in_recovery' | 'timeline' | 'other_cluster' | 'other_database' | 'unverified'

/** Every reason, for metrics whose series should not come and go. */
export const REPLICA_DOWN_REASONS: readonly ReplicaDownReason[] = ['unreachable', 'read_failed', 'not_in_recovery', 'timeline', 'other_cluster', 'other_database', 'unverified']

export interface ReplicaState {
  name: string
  status: ReplicaStatus
  /** Why it is down; null unless down. */
  reason: ReplicaDownReason | null
  /** Replay lag at the last check, ms; null when unknown. */
  lagMs: number | null
}

/** Called on every change of a replica's status or reason (not of its lag alone). */
export type ReplicaWatcher = (state: ReplicaState, previous: ReplicaState) => void
