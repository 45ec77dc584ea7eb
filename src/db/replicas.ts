import type pg from 'pg'
import type { PrismaClient } from '../generated/prisma/client.js'
import type { SqlReader } from './rows.js'
import { isDatabaseUnavailable } from './unavailable.js'

// Read replicas, with a health and lag check of our own. Prisma's read-replicas extension
// picks a replica at random with no notion of one being down or behind, and routes only
// the query builder's reads (this service's reads are raw SQL, sent through the driver
// adapter: rows.ts); see docs/operations.md.

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
 * staging cluster, a URL that points elsewhere); or which cluster it belongs to cannot be
 * told yet (the primary's identifier was never read: no replica is trusted until it is).
 */
export type ReplicaDownReason = 'unreachable' | 'read_failed' | 'not_in_recovery' | 'timeline' | 'other_cluster' | 'unverified'

/** Every reason, for metrics whose series should not come and go. */
export const REPLICA_DOWN_REASONS: readonly ReplicaDownReason[] = ['unreachable', 'read_failed', 'not_in_recovery', 'timeline', 'other_cluster', 'unverified']

/**
 * A replica connection refused as it opened, because its server is not known to belong to
 * the primary's cluster: the read (or check) that needed it fails, and is run elsewhere.
 */
export class ReplicaIdentityError extends Error {
  constructor (readonly reason: 'other_cluster' | 'unverified', message: string) {
    super(message)
    this.name = 'ReplicaIdentityError'
  }
}

/** The ReplicaIdentityError behind a failed read, however the driver adapter wrapped it. */
function identityError (error: unknown, depth = 0): ReplicaIdentityError | undefined {
  if (error instanceof ReplicaIdentityError) return error
  if (error === null || typeof error !== 'object' || depth > 6) return undefined
  const e = error as { cause?: unknown, meta?: { driverAdapterError?: unknown } }
  return identityError(e.meta?.driverAdapterError, depth + 1) ?? identityError(e.cause, depth + 1)
}

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

// How far a replica is behind, measured against the primary's WAL position rather than the
// replica's own view: every check samples the primary's position, and a replica's lag is
// the age of the newest sample its replay has reached (0 when it has reached the current
// one). This holds on an idle primary (nothing to replay is no lag) and finds a replica cut
// off from its primary (the primary moves on, the replica does not); it needs no privilege
// (pg_stat_wal_receiver hides its state from a role like the API's). Resolution: one
// check interval.
//
// A position means something only within one cluster, on the primary's timeline. Each check
// reads the primary's `system_identifier` (pg_control_system(), executable by PUBLIC, like
// pg_control_checkpoint) and each replica's: a replica of another cluster is down whatever its
// position (another cluster's LSNs and timeline 1 say nothing about ours), and so is every
// replica while the primary's identifier has never been read. Every replica connection is
// also checked once as it opens (ReplicaSet.verifyConnection), before any read is sent on
// it, so that a URL whose server changes between two checks never serves a read from another
// cluster. A replica that is not in
// recovery any more, or that replays another timeline, is down whatever its position. The
// primary's timeline is exact (the name of its current WAL file begins with it); a standby's
// is the timeline of its last restartpoint (pg_control_checkpoint), the one that needs no
// privilege: a standby that did follow a failover onto the new timeline counts as down until
// its next restartpoint (docs/operations.md). A wrong timeline is never taken as right.
const PRIMARY_LSN_SQL = 'SELECT pg_current_wal_lsn()::text AS lsn, substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) AS timeline, (pg_control_system()).system_identifier::text AS system'
const REPLICA_LSN_SQL = 'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn, (pg_control_checkpoint()).timeline_id AS timeline, (pg_control_system()).system_identifier::text AS system'
const SYSTEM_SQL = 'SELECT (pg_control_system()).system_identifier::text AS system'

/** A pg_lsn ("16/B374D848") as a number. */
export const lsnValue = (lsn: string): bigint => {
  const [high, low] = lsn.split('/')
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
}

interface Sample { at: number, lsn: bigint }

// SQLSTATE 40001 on a standby: a query cancelled because it conflicted with WAL replay. The
// driver adapters report it as kind TransactionWriteConflict with the SQLSTATE in
// `originalCode` (other SQLSTATEs: kind postgres, `code`).
const sqlState = (error: unknown): string | undefined => {
  const cause = (error as { meta?: { driverAdapterError?: { cause?: { code?: string, originalCode?: string } } } })?.meta?.driverAdapterError?.cause
  return cause?.originalCode ?? cause?.code
}

/**
 * Thrown by a read that found its database without what it needs and that the primary has (a
 * replica that has not replayed it yet): the read is run on the next replica or the primary.
 */
export class ReadElsewhere extends Error {}

/** Whether a read that failed on a replica is worth running elsewhere. */
export const replicaFailed = (error: unknown): boolean => error instanceof ReadElsewhere || isDatabaseUnavailable(error) || sqlState(error) === '40001' || identityError(error) !== undefined

interface Member extends ReplicaClient, ReplicaState {}

export class ReplicaSet {
  private readonly members: Member[]
  private next = 0
  private timer: NodeJS.Timeout | undefined
  private checking: Promise<void> | undefined

  /** The primary's WAL position at recent checks, oldest first. */
  private samples: Sample[] = []
  /** The primary's timeline at the last check that reached it. */
  private primaryTimeline: number | undefined
  /** The primary's system_identifier at the last check that reached it. */
  private primarySystem: string | undefined
  private readonly watchers = new Set<ReplicaWatcher>()

  constructor (replicas: ReplicaClient[], private readonly options: { primary: pg.Pool, maxLagMs: number, checkIntervalMs: number }) {
    this.members = replicas.map(r => ({ ...r, status: 'unknown', reason: null, lagMs: null }))
  }

  /**
   * Calls `watcher` on every change of state from now on, and at once for each replica
   * whose first check is already done (as a change from unknown). Returns the unsubscriber.
   */
  watch (watcher: ReplicaWatcher): () => void {
    this.watchers.add(watcher)
    for (const m of this.members) {
      if (m.status !== 'unknown') watcher(stateOf(m), { name: m.name, status: 'unknown', reason: null, lagMs: null })
    }
    return () => { this.watchers.delete(watcher) }
  }

  /** Checks now and then every interval; replicas take reads once a check passed. */
  start (): void {
    if (this.members.length === 0 || this.timer !== undefined) return
    void this.check()
    this.timer = setInterval(() => { void this.check() }, this.options.checkIntervalMs)
    this.timer.unref()
  }

  async check (): Promise<void> {
    this.checking ??= this.checkAll().finally(() => { this.checking = undefined })
    await this.checking
  }

  private async checkAll (): Promise<void> {
    // The primary unreachable: no new sample; replicas keep being judged against the last
    // ones (with no writes possible, what they have is as fresh as it gets).
    const primary = await this.options.primary.query<{ lsn: string, timeline: string, system: string }>(PRIMARY_LSN_SQL).catch(() => undefined)
    if (primary !== undefined) {
      this.samples.push({ at: Date.now(), lsn: lsnValue(primary.rows[0]!.lsn) })
      this.primaryTimeline = Number.parseInt(primary.rows[0]!.timeline, 16)
      this.primarySystem = primary.rows[0]!.system
    }
    const keepFrom = Date.now() - 2 * this.options.maxLagMs - 2 * this.options.checkIntervalMs
    while (this.samples.length > 1 && this.samples[0]!.at < keepFrom) this.samples.shift()
    await Promise.all(this.members.map(async m => { await this.checkOne(m) }))
  }

  private async checkOne (member: Member): Promise<void> {
    let replay: { standby: boolean, lsn: string | null, timeline: number | null, system: string }
    try {
      replay = (await member.pool.query<{ standby: boolean, lsn: string | null, timeline: number | null, system: string }>(REPLICA_LSN_SQL)).rows[0]!
    } catch (error) {
      this.set(member, 'down', null, identityError(error)?.reason ?? 'unreachable')
      return
    }
    // The connection the check used may predate a change of identity: the identifier it
    // reads now is compared too (and the primary's may have changed: a restore elsewhere).
    if (this.primarySystem === undefined) { this.set(member, 'down', null, 'unverified'); return }
    if (replay.system !== this.primarySystem) { this.set(member, 'down', null, 'other_cluster'); return }
    if (!replay.standby) { this.set(member, 'down', null, 'not_in_recovery'); return }
    if (this.primaryTimeline !== undefined && replay.timeline !== this.primaryTimeline) { this.set(member, 'down', null, 'timeline'); return }
    const lagMs = this.lagOf(replay.lsn)
    this.set(member, lagMs !== null && lagMs <= this.options.maxLagMs ? 'up' : 'lagging', lagMs)
  }

  /** Null: behind every sample kept, i.e. further behind than the bound by far. */
  private lagOf (lsn: string | null): number | null {
    if (lsn === null) return null
    if (this.samples.length === 0) return null
    const replayed = lsnValue(lsn)
    const newest = this.samples[this.samples.length - 1]!
    if (replayed >= newest.lsn) return 0
    for (let i = this.samples.length - 2; i >= 0; i--) {
      // It has what the primary had at sample i, not all it had at i + 1: count from i.
      if (replayed >= this.samples[i]!.lsn) return newest.at - this.samples[i]!.at
    }
    return null
  }

  private set (member: Member, status: ReplicaStatus, lagMs: number | null, reason: ReplicaDownReason | null = null): void {
    const previous = stateOf(member)
    member.status = status
    member.lagMs = lagMs
    member.reason = reason
    if (previous.status === status && previous.reason === reason) return
    const state = stateOf(member)
    for (const watcher of this.watchers) watcher(state, previous)
  }

  /** The replicas that take reads now, rotated so that the load spreads. */
  usable (): ReplicaClient[] {
    const up = this.members.filter(m => m.status === 'up')
    if (up.length === 0) return up
    const start = this.next++ % up.length
    return [...up.slice(start), ...up.slice(0, start)]
  }

  /** A read failed on this replica (`error`): no more reads until a check passes again. */
  markDown (replica: ReplicaClient, error?: unknown): void {
    const member = this.members.find(m => m.name === replica.name && m.pool === replica.pool)
    if (member !== undefined) this.set(member, 'down', null, identityError(error)?.reason ?? 'read_failed')
  }

  /**
   * Run on every new connection of a replica's pool before it is used (pg-pool's onConnect):
   * refused unless its server has the primary's system_identifier, as last read. One
   * statement per connection opened, none per read.
   */
  async verifyConnection (client: pg.ClientBase, name: string): Promise<void> {
    const expected = this.primarySystem
    if (expected === undefined) throw new ReplicaIdentityError('unverified', `read replica ${name}: the primary's system_identifier is not known yet, so this replica cannot be told to belong to its cluster`)
    const system = (await client.query<{ system: string }>(SYSTEM_SQL)).rows[0]!.system
    if (system !== expected) throw new ReplicaIdentityError('other_cluster', `read replica ${name}: system_identifier ${system}, the primary's is ${expected}: a server of another cluster`)
  }

  clients (): ReplicaClient[] {
    return this.members
  }

  states (): ReplicaState[] {
    return this.members.map(stateOf)
  }

  async close (): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.checking
    await Promise.all(this.members.map(async m => { await disconnect(m.prisma, m.pool) }))
  }
}

const stateOf = ({ name, status, reason, lagMs }: ReplicaState): ReplicaState => ({ name, status, reason, lagMs })

/** Closes a client and its pool; the adapter ends the pool only if the client ever connected. */
export async function disconnect (prisma: PrismaClient, pool: pg.Pool): Promise<void> {
  await prisma.$disconnect()
  if (!pool.ended) await pool.end()
}

/** host:port/database of a connection URL, for display. */
export function displayName (url: string): string {
  const u = new URL(url)
  return `${u.hostname}:${u.port === '' ? '5432' : u.port}${u.pathname}`
}
