import type pg from 'pg'
import type { PrismaClient } from '../generated/prisma/client.js'
import { isDatabaseUnavailable } from './unavailable.js'

// Read replicas, with a health and lag check of our own. Prisma's read-replicas extension
// picks a replica at random with no notion of one being down or behind, and routes only
// the query builder's reads (this service's reads are $queryRaw); see docs/operations.md.

export interface ReplicaClient {
  /** host:port/database, never credentials: for logs, metrics and /health/ready. */
  name: string
  pool: pg.Pool
  prisma: PrismaClient
}

export type ReplicaStatus = 'unknown' | 'up' | 'lagging' | 'down'

export interface ReplicaState {
  name: string
  status: ReplicaStatus
  /** Replay lag at the last check, ms; null when unknown. */
  lagMs: number | null
}

// How far a replica is behind, measured against the primary's WAL position rather than the
// replica's own view: every check samples the primary's position, and a replica's lag is
// the age of the newest sample its replay has reached (0 when it has reached the current
// one). This holds on an idle primary (nothing to replay is no lag) and finds a replica cut
// off from its primary (the primary moves on, the replica does not); it needs no privilege
// (pg_stat_wal_receiver hides its state from a role like the API's). Resolution: one
// check interval.
const PRIMARY_LSN_SQL = 'SELECT pg_current_wal_lsn()::text AS lsn'
const REPLICA_LSN_SQL = 'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn'

/** A pg_lsn ("16/B374D848") as a number. */
export const lsnValue = (lsn: string): bigint => {
  const [high, low] = lsn.split('/')
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
}

interface Sample { at: number, lsn: bigint }

// SQLSTATE 40001 on a standby: a query cancelled because it conflicted with WAL replay.
const sqlState = (error: unknown): string | undefined =>
  (error as { meta?: { driverAdapterError?: { cause?: { code?: string } } } })?.meta?.driverAdapterError?.cause?.code

/** Whether a read that failed on a replica is worth running elsewhere. */
export const replicaFailed = (error: unknown): boolean => isDatabaseUnavailable(error) || sqlState(error) === '40001'

interface Member extends ReplicaClient, ReplicaState {}

export class ReplicaSet {
  private readonly members: Member[]
  private next = 0
  private timer: NodeJS.Timeout | undefined
  private checking: Promise<void> | undefined

  /** The primary's WAL position at recent checks, oldest first. */
  private samples: Sample[] = []

  constructor (replicas: ReplicaClient[], private readonly options: { primary: pg.Pool, maxLagMs: number, checkIntervalMs: number }) {
    this.members = replicas.map(r => ({ ...r, status: 'unknown', lagMs: null }))
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
    const primary = await this.options.primary.query<{ lsn: string }>(PRIMARY_LSN_SQL).catch(() => undefined)
    if (primary !== undefined) this.samples.push({ at: Date.now(), lsn: lsnValue(primary.rows[0]!.lsn) })
    const keepFrom = Date.now() - 2 * this.options.maxLagMs - 2 * this.options.checkIntervalMs
    while (this.samples.length > 1 && this.samples[0]!.at < keepFrom) this.samples.shift()
    await Promise.all(this.members.map(async m => { await this.checkOne(m) }))
  }

  private async checkOne (member: Member): Promise<void> {
    let replay: { standby: boolean, lsn: string | null }
    try {
      replay = (await member.pool.query<{ standby: boolean, lsn: string | null }>(REPLICA_LSN_SQL)).rows[0]!
    } catch {
      this.set(member, 'down', null)
      return
    }
    const lagMs = this.lagOf(replay)
    this.set(member, lagMs !== null && lagMs <= this.options.maxLagMs ? 'up' : 'lagging', lagMs)
  }

  /** Null: behind every sample kept, i.e. further behind than the bound by far. */
  private lagOf ({ standby, lsn }: { standby: boolean, lsn: string | null }): number | null {
    if (!standby) return 0 // promoted: it is a primary now
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

  private set (member: Member, status: ReplicaStatus, lagMs: number | null): void {
    member.status = status
    member.lagMs = lagMs
  }

  /** The replicas that take reads now, rotated so that the load spreads. */
  usable (): ReplicaClient[] {
    const up = this.members.filter(m => m.status === 'up')
    if (up.length === 0) return up
    const start = this.next++ % up.length
    return [...up.slice(start), ...up.slice(0, start)]
  }

  /** A read failed on this replica: no more reads until a check passes again. */
  markDown (replica: ReplicaClient): void {
    const member = this.members.find(m => m.name === replica.name && m.pool === replica.pool)
    if (member !== undefined) this.set(member, 'down', null)
  }

  clients (): ReplicaClient[] {
    return this.members
  }

  states (): ReplicaState[] {
    return this.members.map(({ name, status, lagMs }) => ({ name, status, lagMs }))
  }

  async close (): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.checking
    await Promise.all(this.members.map(async m => { await disconnect(m.prisma, m.pool) }))
  }
}

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
