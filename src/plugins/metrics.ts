import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { CACHE_OFF_REASONS } from '../auth/caller-cache.js'
import { bearerMatcher } from '../auth/bearer.js'
import { REPLICA_DOWN_REASONS, type ReplicaStatus } from '../db/replica-state.js'
import { ApiError } from '../errors.js'
import type { RateLimitStore } from './rate-limit.js'

// GET /metrics in the Prometheus text format, only when METRICS_TOKEN is set and only with
// it as a bearer token: the figures (routes, pools, replicas) are not for the internet.
// Without the token there is no route and no hook, so nothing is paid per request.

export interface MetricsOptions {
  token: string | undefined
  /** The rate-limit store, once the plugin of the /api context has made it. */
  rateLimitStore: () => RateLimitStore | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's Prometheus registry, when METRICS_TOKEN is set: features register their metrics in it. */
    metricsRegistry?: Registry
  }
}

// Every state, always, so that the series of a replica do not come and go with its state.
const REPLICA_STATUSES: readonly ReplicaStatus[] = ['unknown', 'up', 'lagging', 'down']

export default fp(async function metricsPlugin (app: FastifyInstance, options: MetricsOptions) {
  if (options.token === undefined) return
  // The token is taken whole (the configuration does not forbid spaces in it).
  const authorized = bearerMatcher(options.token)
  // A registry of this app's own: tests build many apps in one process.
  const register = new Registry()
  collectDefaultMetrics({ register })
  app.decorate('metricsRegistry', register)

  const labelNames = ['method', 'route', 'status'] as const
  const requests = new Counter({ name: 'http_requests_total', help: 'Requests answered, by route template and status.', labelNames, registers: [register] })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to sending its response, by route template and status.',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [register],
  })
  app.addHook('onResponse', async (request, reply) => {
    // The template, not the URL: label values stay bounded whatever clients send.
    const route = request.routeOptions.url ?? 'unmatched'
    if (route === '/metrics') return
    const labels = { method: request.method, route, status: String(reply.statusCode) }
    requests.inc(labels)
    duration.observe(labels, reply.elapsedTime / 1000)
  })

  const database = app.database
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

  // eslint-disable-next-line no-new
  new Gauge({
    name: 'rate_limit_store_redis',
    help: '1 when rate-limit counters are in Redis (shared by every instance), 0 in memory.',
    registers: [register],
    collect () { this.set(options.rateLimitStore()?.kind === 'redis' ? 1 : 0) },
  })
  // eslint-disable-next-line no-new
  new Gauge({
    name: 'rate_limit_store_up',
    help: '1 when the rate-limit store answers; 0 means limits fail open.',
    registers: [register],
    collect () { this.set(options.rateLimitStore()?.ready() === true ? 1 : 0) },
  })

  const cache = app.callerCache
  // Counters follow the cache's own tallies: each scrape adds what happened since the last.
  const cacheCounter = (name: string, help: string, read: () => number): void => {
    let seen = 0
    // eslint-disable-next-line no-new
    new Counter({
      name,
      help,
      registers: [register],
      collect () {
        const now = read()
        if (now > seen) this.inc(now - seen)
        seen = now
      },
    })
  }
  cacheCounter('caller_cache_hits_total', 'Requests whose caller came from the in-process cache.', () => cache.stats.hits)
  cacheCounter('caller_cache_misses_total', 'Requests whose caller was looked up on the primary.', () => cache.stats.misses)
  cacheCounter('caller_cache_invalidations_total', 'Times the whole cache was cleared by a change notification.', () => cache.stats.invalidations)
  // eslint-disable-next-line no-new
  new Gauge({
    name: 'caller_cache_enabled',
    help: '1 while the caller cache is on (its change listener hears its own probe notifications and AUTH_CACHE_TTL_MS > 0).',
    registers: [register],
    collect () { this.set(cache.enabled ? 1 : 0) },
  })
  // eslint-disable-next-line no-new
  new Gauge({
    name: 'caller_cache_off_reason',
    help: 'Why the caller cache is off: 1 on the current reason (disabled: AUTH_CACHE_TTL_MS=0; starting; disconnected: no listener connection; no_echo: connected but not hearing notifications; no_probe: no probe could be sent and come back within the bound, the primary unreachable or its pool saturated), all 0 while on.',
    labelNames: ['reason'] as const,
    registers: [register],
    collect () {
      const current = cache.offReason
      for (const reason of CACHE_OFF_REASONS) this.set({ reason }, current === reason ? 1 : 0)
    },
  })

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!authorized(request.headers.authorization)) {
      throw new ApiError(401, 'GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`.')
    }
    reply.header('content-type', register.contentType).header('cache-control', 'no-store')
    return await register.metrics()
  })
}, { name: 'metrics', dependencies: ['prisma', 'caller-cache'] })
