import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Redis } from 'ioredis'
import { ApiError } from '../errors.js'
import { inSpan } from '../telemetry/tracing.js'

export type Limit = (request: FastifyRequest, reply: FastifyReply) => Promise<void>

declare module 'fastify' {
  interface FastifyInstance {
    /** Applied by the auth hook: per API key once authenticated, per IP on failure. */
    limits: { perKey: Limit, failedAuth: Limit }
  }
}

/** Where the counters are, for metrics: Redis may be configured and still unreachable. */
export interface RateLimitStore { kind: 'memory' | 'redis', ready: () => boolean }

export interface RateLimitOptions {
  /** Requests per window per API key. */
  perKeyMax: number
  /** Failed authentications per window per client IP. */
  failedAuthMax: number
  /** The window's length in seconds: counters start at a caller's first request and reset after it. */
  windowSeconds: number
  /** Counters shared by every instance; unset: in this process. */
  redisUrl?: string | undefined
  /** Told which store the counters use (this plugin lives in the /api context; metrics at the root). */
  onStore?: (store: RateLimitStore) => void
}

/**
 * Counters from @fastify/rate-limit (its store, in memory or in Redis); the headers and the
 * 429 are ours, so that they come in the shared error shape. If Redis is unreachable the
 * API keeps serving (fail open): commands fail at once while disconnected, or after 250 ms
 * when Redis hangs, and ioredis reconnects by itself.
 */
export default fp(async function rateLimitPlugin (app: FastifyInstance, options: RateLimitOptions) {
  let redis: Redis | undefined
  if (options.redisUrl !== undefined) {
    redis = new Redis(options.redisUrl, { connectTimeout: 1000, commandTimeout: 250, maxRetriesPerRequest: 0, enableOfflineQueue: false })
    let warned = false
    redis.on('error', (err: Error) => {
      if (!warned) app.log.warn({ err }, 'Redis unavailable: rate limits fail open until it is back')
      warned = true
    })
    redis.on('ready', () => { warned = false })
    app.addHook('onClose', async () => { redis?.disconnect() })
    // Commands before the connection is ready would fail open: give it a bounded moment.
    await new Promise<void>(resolve => {
      const done = (): void => { clearTimeout(timer); resolve() }
      const timer = setTimeout(done, 1000)
      redis?.once('ready', done)
    })
  }
  options.onStore?.(redis !== undefined ? { kind: 'redis', ready: () => redis?.status === 'ready' } : { kind: 'memory', ready: () => true })
  await app.register(rateLimit, { global: false, skipOnError: true, nameSpace: 'screening-rl:', ...(redis !== undefined ? { redis } : {}) })

  const per = options.windowSeconds === 60 ? 'a minute' : `per ${options.windowSeconds} s`
  const timeWindow = options.windowSeconds * 1000

  function limit (check: ReturnType<FastifyInstance['createRateLimit']>, what: string, reason: string): Limit {
    return async (request, reply) => {
      // A span where the counter is a round trip to Redis; an in-memory one costs nothing to see.
      const result = redis === undefined ? await check(request) : await inSpan('rate limit (Redis)', { attributes: { 'screening.rate_limit': reason } }, async () => await check(request))
      if (result.isAllowed) return
      reply.header('x-ratelimit-limit', result.max)
        .header('x-ratelimit-remaining', result.remaining)
        .header('x-ratelimit-reset', result.ttlInSeconds)
      if (result.isExceeded) {
        request.refusal = reason
        throw new ApiError(429, `Rate limit exceeded: at most ${result.max} ${what} ${per}; retry in ${result.ttlInSeconds} s.`, {}, { 'retry-after': String(result.ttlInSeconds) })
      }
    }
  }

  app.decorate('limits', {
    perKey: limit(app.createRateLimit({ max: options.perKeyMax, timeWindow, keyGenerator: req => `key:${req.caller.apiKeyId}` }), 'requests per API key', 'rate_limit_per_key'),
    failedAuth: limit(app.createRateLimit({ max: options.failedAuthMax, timeWindow, keyGenerator: req => `authfail:${req.ip}` }), 'failed authentications per client', 'rate_limit_failed_auth'),
  })
}, { name: 'rate-limit', dependencies: ['request-log'] })
