import { Gauge, type Registry } from 'prom-client'
import type { Database } from '../db/database.js'
import { REPLICA_DOWN_REASONS, type ReplicaStatus } from '../db/replica-state.js'

// The database's gauges of GET /metrics (metrics.ts): its pools and its read replicas, read
// at each scrape.

// Every state, always, so that the series of a replica do not come and go with its state.
const REPLICA_STATUSES: readonly ReplicaStatus[] = ['unknown', 'up', 'lagging', 'down']

export function databaseMetrics (register: Registry, database: Pick<Database, 'pools' | 'replicas'>): void {
  // eslint-disable-next-line no-new
  new Gauge({
    name: 'db_pool_connections',
    help: 'Connections of each database pool: in use, idle, and requests waiting for one.',
    labelNames: ['pool', 'state'] as const,
    registers: [register],
    collect () {
      this.reset()
      for (const p of database.pools()) {
        this.set({ pool: p.pool, state: 'in_use' }, p.total - p.idle)
        this.set({ pool: p.pool, state: 'idle' }, p.idle)
        this.set({ pool: p.pool, state: 'waiting' }, p.waiting)
      }
    },
  })
  // eslint-disable-next-line no-new
  new Gauge({
    name: 'db_replica_up',
    help: 'Whether a read replica takes reads (up and within REPLICA_MAX_LAG_MS).',
    // No status label here: a label that changes value starts a new series, which would
    // restart the `for:` of an alert on `db_replica_up == 0` as a replica goes lagging → down.
    labelNames: ['replica'] as const,
    registers: [register],
    collect () {
      this.reset()
      for (const r of database.replicas()) this.set({ replica: r.name }, r.status === 'up' ? 1 : 0)
    },
  })
  // eslint-disable-next-line no-new
  new Gauge({
    name: 'db_replica_status',
    help: 'State of each read replica at the last check: 1 on the current state, 0 on the others.',
    labelNames: ['replica', 'status'] as const,
    registers: [register],
    collect () {
      this.reset()
      for (const r of database.replicas()) {
        for (const status of REPLICA_STATUSES) this.set({ replica: r.name, status }, r.status === status ? 1 : 0)
      }
    },
  })
  // eslint-disable-next-line no-new
  new Gauge({
    name: 'db_replica_down_reason',
    help: 'Why each read replica is down: 1 on the current reason (unreachable, read_failed, not_in_recovery: promoted or detached, timeline: not on the primary\'s timeline, other_cluster: a server of another cluster than the primary\'s, other_database: another database of the primary\'s cluster, unverified: the primary\'s cluster not known yet), all 0 unless down.',
    labelNames: ['replica', 'reason'] as const,
    registers: [register],
    collect () {
      this.reset()
      for (const r of database.replicas()) {
        for (const reason of REPLICA_DOWN_REASONS) this.set({ replica: r.name, reason }, r.reason === reason ? 1 : 0)
      }
    },
  })
  // eslint-disable-next-line no-new
  new Gauge({
    name: 'db_replica_lag_seconds',
    help: 'Replay lag of each read replica at the last check, against the primary\'s WAL position.',
    labelNames: ['replica'] as const,
    registers: [register],
    collect () {
      this.reset()
      for (const r of database.replicas()) if (r.lagMs !== null) this.set({ replica: r.name }, r.lagMs / 1000)
    },
  })
}
