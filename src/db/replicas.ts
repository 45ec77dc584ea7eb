import type pg from 'pg'
import type { PrismaClient } from '../generated/prisma/client.js'
import { ReplicaIdentityError, identityError } from './errors.js'
import { PrimaryPositions } from './replica-lag.js'
import type { ReplicaClient, ReplicaDownReason, ReplicaState, ReplicaStatus, ReplicaWatcher } from './replica-state.js'

// Read replicas, with a health and lag check of our own. Prisma's read-replicas extension
// picks a replica at random with no notion of one being down or behind, and routes only
// the query builder's reads (this service's reads are raw SQL, sent through the driver
// adapter: rows.ts); see docs/operations.md.

// A position means something only within one cluster, on the primary's timeline. Each check
// reads the primary's identity, its `system_identifier` (pg_control_system(), executable by
// PUBLIC, like pg_control_checkpoint) and its database's oid (which a physical standby shares),
// and each replica's: a replica of another cluster is down whatever its position (another
// cluster's LSNs and timeline 1 say nothing about ours), one whose URL names another database
// of the cluster too (a staging copy beside production), and so is every replica while the
// primary's identity has never been read. Every replica connection is also checked once as
// it opens (ReplicaSet.verifyConnection), before any read is sent on it, so that a URL whose
// server changes between two checks never serves a read from another cluster. A replica that
// is not in recovery any more, or that replays another timeline, is down whatever its
// position. The primary's timeline is exact (the name of its current WAL file begins with
// it); a standby's is the timeline of its last restartpoint (pg_control_checkpoint), the one
// that needs no privilege: a standby that did follow a failover onto the new timeline counts
// as down until its next restartpoint (docs/operations.md). A wrong timeline is never taken
// as right.
const IDENTITY = '(pg_control_system()).system_identifier::text AS system, (SELECT oid::text FROM pg_database WHERE datname = current_database()) AS database'
const PRIMARY_LSN_SQL = `SELECT pg_current_wal_lsn()::text AS lsn, substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) AS timeline, ${IDENTITY}`
const REPLAYED_SQL = 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok'
const REPLICA_LSN_SQL = `SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn, (pg_control_checkpoint()).timeline_id AS timeline, ${IDENTITY}`
const IDENTITY_SQL = `SELECT ${IDENTITY}`

/** Which cluster, and which of its databases, a connection reaches. */
interface Identity { system: string, database: string }

/** Why a server with `seen` identity is not a replica of the primary's database, if it is not. */
const mismatch = (seen: Identity, primary: Identity): 'other_cluster' | 'other_database' | undefined =>
  seen.system !== primary.system ? 'other_cluster' : seen.database !== primary.database ? 'other_database' : undefined

interface Member extends ReplicaClient, ReplicaState {}

export class ReplicaSet {
  private readonly members: Member[]
  private next = 0
  private timer: NodeJS.Timeout | undefined
  private checking: Promise<void> | undefined

  /** The primary's WAL position at recent checks (replica-lag.ts). */
  private readonly positions = new PrimaryPositions()
  /** The primary's timeline at the last check that reached it. */
  private primaryTimeline: number | undefined
  /** The primary's identity at the last check that reached it. */
  private primaryIdentity: Identity | undefined
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
    const primary = await this.options.primary.query<{ lsn: string, timeline: string } & Identity>(PRIMARY_LSN_SQL).catch(() => undefined)
    if (primary !== undefined) {
      this.positions.add(Date.now(), primary.rows[0]!.lsn)
      this.primaryTimeline = Number.parseInt(primary.rows[0]!.timeline, 16)
      this.primaryIdentity = { system: primary.rows[0]!.system, database: primary.rows[0]!.database }
    }
    this.positions.forgetBefore(Date.now() - 2 * this.options.maxLagMs - 2 * this.options.checkIntervalMs)
    await Promise.all(this.members.map(async m => { await this.checkOne(m) }))
  }

  private async checkOne (member: Member): Promise<void> {
    let replay: { standby: boolean, lsn: string | null, timeline: number | null } & Identity
    try {
      replay = (await member.pool.query<{ standby: boolean, lsn: string | null, timeline: number | null } & Identity>(REPLICA_LSN_SQL)).rows[0]!
    } catch (error) {
      this.set(member, 'down', null, identityError(error)?.reason ?? 'unreachable')
      return
    }
    // The connection the check used may predate a change of identity: the identifier it
    // reads now is compared too (and the primary's may have changed: a restore elsewhere).
    if (this.primaryIdentity === undefined) { this.set(member, 'down', null, 'unverified'); return }
    const other = mismatch(replay, this.primaryIdentity)
    if (other !== undefined) { this.set(member, 'down', null, other); return }
    if (!replay.standby) { this.set(member, 'down', null, 'not_in_recovery'); return }
    if (this.primaryTimeline !== undefined && replay.timeline !== this.primaryTimeline) { this.set(member, 'down', null, 'timeline'); return }
    const lagMs = this.positions.lagOf(replay.lsn)
    this.set(member, lagMs !== null && lagMs <= this.options.maxLagMs ? 'up' : 'lagging', lagMs)
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

  /**
   * Whether every replica taking reads has replayed the primary's WAL up to `lsn` (one
   * statement each). One that does not answer counts as replayed: a read there fails over to
   * the next replica or the primary in the same request.
   */
  async replayed (lsn: string): Promise<boolean> {
    const up = this.members.filter(m => m.status === 'up')
    const answers = await Promise.all(up.map(async m => await m.pool.query<{ ok: boolean | null }>(REPLAYED_SQL, [lsn]).then(r => r.rows[0]?.ok === true, () => true)))
    return answers.every(Boolean)
  }

  /** A read failed on this replica (`error`): no more reads until a check passes again. */
  markDown (replica: ReplicaClient, error?: unknown): void {
    const member = this.members.find(m => m.name === replica.name && m.pool === replica.pool)
    if (member !== undefined) this.set(member, 'down', null, identityError(error)?.reason ?? 'read_failed')
  }

  /**
   * Run on every new connection of a replica's pool before it is used (pg-pool's onConnect):
   * refused unless it reaches the primary's database in the primary's cluster, as last read.
   * One statement per connection opened, none per read.
   */
  async verifyConnection (client: pg.ClientBase, name: string): Promise<void> {
    const expected = this.primaryIdentity
    if (expected === undefined) throw new ReplicaIdentityError('unverified', `read replica ${name}: the primary's system_identifier is not known yet, so this replica cannot be told to belong to its cluster`)
    const seen = (await client.query<Identity>(IDENTITY_SQL)).rows[0]!
    const other = mismatch(seen, expected)
    if (other === 'other_cluster') throw new ReplicaIdentityError(other, `read replica ${name}: system_identifier ${seen.system}, the primary's is ${expected.system}: a server of another cluster`)
    if (other === 'other_database') throw new ReplicaIdentityError(other, `read replica ${name}: database oid ${seen.database}, the primary's is ${expected.database}: another database of the primary's cluster`)
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
