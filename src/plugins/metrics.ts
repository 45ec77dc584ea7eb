import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { bearerMatcher } from '../auth/bearer.js'
import { ApiError } from '../errors.js'
import { callerCacheMetrics } from './caller-cache-metrics.js'
import { databaseMetrics } from './database-metrics.js'
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

  databaseMetrics(register, app.database)
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

  callerCacheMetrics(register, app.callerCache)

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!authorized(request.headers.authorization)) {
      throw new ApiError(401, 'GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`.')
    }
    reply.header('content-type', register.contentType).header('cache-control', 'no-store')
    return await register.metrics()
  })
}, { name: 'metrics', dependencies: ['database', 'caller-cache'] })
