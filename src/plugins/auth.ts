import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { apiKeyHashText, apiKeyPrefix, hashApiKey } from '../auth/api-keys.js'
import { bearerCredential } from '../auth/bearer.js'
import type { Caller } from '../auth/caller.js'
import type { LoadedCaller } from '../auth/caller-cache.js'
import { findCallerByKeyHash, touchKey } from '../auth/repository.js'
import { ApiError } from '../errors.js'
import { inSpan } from '../telemetry/tracing.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook before anything else runs on an authenticated route. */
    caller: Caller
  }
}

/** `last_used_at` is recorded at most this often per key: no write on every request. */
export const LAST_USED_RESOLUTION_MS = 5 * 60_000

// Every failure is the same 401: nothing tells a caller whether a key ever existed.
const unauthorized = (): ApiError => new ApiError(401, 'A valid API key is required: send `Authorization: Bearer <api key>`.')

export default fp(async function authPlugin (app: FastifyInstance) {
  app.decorateRequest('caller', null as unknown as Caller)
  const touched = new Map<string, number>()
  const cache = app.callerCache

  /** The caller behind a key: from the cache (by the key's hash), else one query (kept unless a change overtook it). */
  async function lookUp (key: string, now: Date): Promise<LoadedCaller | null> {
    const cacheKey = apiKeyHashText(key)
    const cached = cache.get(cacheKey, now.getTime())
    if (cached !== undefined) return cached
    return await inSpan('auth: caller lookup (cache miss)', {}, async () => await lookUpStored(key, cacheKey, now))
  }

  async function lookUpStored (key: string, cacheKey: string, now: Date): Promise<LoadedCaller | null> {
    const version = cache.version()
    // From the primary, never a replica: the cache is cleared by the primary's NOTIFY, and a
    // lookup on a replica behind it could store a revoked key again for a whole TTL.
    const caller = await findCallerByKeyHash(app.database.prisma, hashApiKey(key), now)
    if (caller !== null) cache.set(cacheKey, caller, version, now.getTime())
    return caller
  }

  function recordUse (request: FastifyRequest, caller: LoadedCaller, now: Date): void {
    const last = Math.max(caller.lastUsedAt?.getTime() ?? 0, touched.get(caller.apiKeyId) ?? 0)
    if (now.getTime() - last < LAST_USED_RESOLUTION_MS) return
    touched.set(caller.apiKeyId, now.getTime())
    if (touched.size > 10_000) touched.clear()
    touchKey(app.database.prisma, caller.apiKeyId, now, new Date(now.getTime() - LAST_USED_RESOLUTION_MS))
      .catch((err: unknown) => { request.log.warn({ err }, 'could not record API key use') })
  }

  /** Why, for the log line alone: the 401 says the same whatever the reason. */
  async function refuse (request: FastifyRequest, reply: FastifyReply, reason: 'no_bearer_key' | 'malformed_key' | 'unknown_key'): Promise<never> {
    await app.limits.failedAuth(request, reply) // 429 instead, past the per-IP limit
    request.refusal = reason
    throw unauthorized()
  }

  app.addHook('onRequest', async (request, reply) => {
    // A string that cannot be one of our keys (spaces in it, say) is refused without a
    // database query.
    const key = bearerCredential(request.headers.authorization)
    if (key === undefined) return await refuse(request, reply, 'no_bearer_key')
    request.keyPrefix = apiKeyPrefix(key) ?? null
    if (request.keyPrefix === null) return await refuse(request, reply, 'malformed_key')
    const now = new Date()
    const caller = await lookUp(key, now)
    // Unknown, revoked or expired: the lookup does not say which, and the cache keeps it so.
    if (caller === null) return await refuse(request, reply, 'unknown_key')
    recordUse(request, caller, now)
    const { lastUsedAt: _, expiresAt: __, ...rest } = caller
    request.caller = rest
    await app.limits.perKey(request, reply)
  })
}, { name: 'auth', dependencies: ['database', 'caller-cache', 'rate-limit', 'request-log'] })
