import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Type } from '@sinclair/typebox'
import { CONFLICT_CODES } from '../error-codes.js'
import { ApiError } from '../errors.js'
import type { ErrorCase } from '../schemas/responses.js'
import { clientReader } from '../db/sql-reader.js'
import type { Prisma } from '../db/database.js'
import { claimKey, firstAnswer, forgetKey, keepAnswer } from './idempotency-keys.js'
import type { Webhooks } from './webhooks.js'

// Idempotency-Key on the webhooks API's POSTs (issue 55), as Stripe has it: a POST retried
// with the same key within 24 hours is answered the first answer again (with
// `Idempotent-Replayed: true`) and does nothing more; the same key with another request is a
// 422; while the first is still being answered, a 409. Keys are the API key's own. An answer
// is kept only once the operation ran: not a validation error (the key is checked after
// validation), nor a 5xx (a retry then runs it again). Kept encrypted, as endpoints' secrets
// are: a creation's answer holds its signing secret.

/** The header's schema, for every POST of the webhooks API. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$', description: 'Makes the POST safe to retry: for 24 hours, a request with the same key and body gets the first answer again (with `Idempotent-Replayed: true`) and does nothing more; with another body, a 422. Any 1 to 255 printable ASCII characters; a UUID per operation is usual. The SDK sends one on its own.', examples: ['5b0a3c1e-9f1d-4f8e-8a55-2c6f0c7d9a01'] })),
})

const reusedMessage = 'This Idempotency-Key was used with another request (another operation, path or body) in the last 24 hours: use a new key for a new request.'
const inUseMessage = 'A request with this Idempotency-Key is still being answered: retry in a moment.'
/**
 * The 409 and 422 a POST taking a key may answer, as the document gives them: a key's, beside
 * the operation's own 409 (`conflict`) when it has one.
 */
export function idempotencyErrors (conflict?: ErrorCase): { 409: ErrorCase, 422: ErrorCase } {
  const inUse = 'a request with the same `Idempotency-Key` is still being answered (`idempotency_key_in_use`, with `Retry-After`)'
  return {
    409: conflict === undefined
      ? { description: `The request conflicts: ${inUse}.`, code: CONFLICT_CODES.idempotencyKeyInUse, error: inUseMessage }
      : { ...conflict, description: `${conflict.description} Or ${inUse}.` },
    422: { description: 'The `Idempotency-Key` was used with another request in the last 24 hours (`idempotency_key_reused`).', code: 'idempotency_key_reused', error: reusedMessage },
  }
}

declare module 'fastify' {
  interface FastifyRequest { idempotencyKey?: { apiKeyId: string, key: string } }
}

/** Keys, with their fields in order: the same request always has the same fingerprint. */
const canonical = (value: unknown): unknown => Array.isArray(value)
  ? value.map(canonical)
  : value !== null && typeof value === 'object' ? Object.fromEntries(Object.keys(value).sort().map(k => [k, canonical((value as Record<string, unknown>)[k])])) : value

const fingerprint = (request: FastifyRequest): Buffer => createHash('sha256')
  .update(`${request.method} ${request.routeOptions.url ?? ''}\n${JSON.stringify(canonical(request.params))}\n${JSON.stringify(canonical(request.body ?? null))}`)
  .digest()

/** Where a key's answer is sealed: its own id, so that a box copied to another row does not open there. */
const boxId = (apiKeyId: string, key: string): string => `idempotency:${apiKeyId}:${key}`

/** The error code of a stored error body, for the log line of its replay. */
function replayedCode (body: string): string | null {
  try {
    const code: unknown = (JSON.parse(body) as { code?: unknown }).code
    return typeof code === 'string' ? code : null
  } catch { return null }
}

export default fp(async function idempotencyPlugin (app: FastifyInstance, { webhooks }: { webhooks: Webhooks }) {
  // The primary through the client, as the webhooks API's other statements.
  const db = clientReader(app.database.prisma)
  app.addHook('preHandler', async (request, reply) => {
    const key = request.headers['idempotency-key']
    if (request.method !== 'POST' || typeof key !== 'string') return
    const apiKeyId = request.caller.apiKeyId
    const print = fingerprint(request)
    if (await claimKey(db, apiKeyId, key, print)) { request.idempotencyKey = { apiKeyId, key }; return }
    const first = await firstAnswer(db, apiKeyId, key)
    if (first === undefined || first.statusCode === null) throw new ApiError(409, inUseMessage, {}, { 'retry-after': '1' }, CONFLICT_CODES.idempotencyKeyInUse)
    if (!Buffer.from(first.fingerprint).equals(print)) throw new ApiError(422, reusedMessage)
    const body = first.response === null ? '' : (await webhooks.secrets()).open(boxId(apiKeyId, key), first.response)
    reply.code(first.statusCode).header('idempotent-replayed', 'true')
    if (first.statusCode >= 400) request.refusal = replayedCode(body) // the log's reason, as the first answer's
    if (body !== '') reply.type('application/json; charset=utf-8')
    return await reply.send(body === '' ? undefined : body)
  })

  app.addHook('onSend', async (request, reply, payload) => {
    const claim = request.idempotencyKey
    if (claim === undefined) return payload
    request.idempotencyKey = undefined
    const { apiKeyId, key } = claim
    if (reply.statusCode >= 500) {
      await forgetKey(db, apiKeyId, key)
      return payload
    }
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : ''
    const sealed = (await webhooks.secrets()).seal(boxId(apiKeyId, key), text)
    await keepAnswer(db, apiKeyId, key, reply.statusCode, sealed)
    return payload
  })
}, { name: 'webhooks-idempotency', dependencies: ['auth'] })

/** Forgets the keys past their 24 hours (they are ignored then anyway). */
export async function pruneIdempotencyKeys (prisma: Prisma): Promise<number> {
  return await prisma.$executeRaw`DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'`
}
