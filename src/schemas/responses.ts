import { Type, type TSchema } from '@sinclair/typebox'
import { ERROR_CODES, INSUFFICIENT_SCOPE, type ErrorStatus } from '../error-codes.js'
import { HEADERS_TIMEOUT_MS, MAX_HEADER_BYTES, MAX_PARAM_LENGTH, MAX_QUERY_LENGTH, MAX_URL_LENGTH } from '../limits.js'
import { SYNC_RETENTION, UNLESS_DEPLOYMENT } from './deployment-defaults.js'
import { ErrorSchema, InsufficientScopeSchema, UpgradeRequiredSchema } from './error.js'

// Responses in OpenAPI's own form (description, headers, content with schema and example),
// which @fastify/swagger passes through and Fastify's serializer understands.

// @fastify/swagger takes a response header as a plain schema and moves its description out.
const header = (description: string, schema: Record<string, unknown>) => ({ ...schema, description })
const seconds = { type: 'integer', format: 'int32', minimum: 0, maximum: 86_400 }

const REQUEST_ID = header('Identifier of the request: the one sent, when sane, or a generated one.', { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9._:-]{1,128}$' })
const TRACE_RESPONSE = header('While the service traces (an operator\'s setting): the trace and span of this request (W3C Trace Context `version-traceid-spanid-flags`), continuing the `traceparent` sent. Quote it with the request id.', { type: 'string', maxLength: 55, pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$' })
const IDS = { 'X-Request-Id': REQUEST_ID, traceresponse: TRACE_RESPONSE }
const RATE_LIMIT = {
  'X-RateLimit-Limit': header('Requests allowed per window (a minute unless configured otherwise) for this API key (for failed authentications: per client).', { type: 'integer', format: 'int32', minimum: 1, maximum: 1_000_000 }),
  'X-RateLimit-Remaining': header('Requests left in the current window.', { type: 'integer', format: 'int32', minimum: 0, maximum: 1_000_000 }),
  'X-RateLimit-Reset': header('Seconds until the budget is full again.', seconds),
}
const ETAG = header('Entity tag of the body; send it back in `If-None-Match`.', { type: 'string', maxLength: 64, pattern: '^"[A-Za-z0-9_-]+"$' })
const CACHE_CONTROL = header('`private, no-cache`: the data is per caller; revalidate every time.', { type: 'string', enum: ['private, no-cache'] })
const RETRY_AFTER = header('Seconds to wait before retrying.', seconds)
/** Analytics' weeks: the release of IANA's tzdata whose rules they were computed with. */
export const TZDATA_VERSION = { 'Tzdata-Version': header('The IANA tzdata release (e.g. `2026f`) whose zone rules placed the completions in local weeks. The same data with other rules may give other weeks, and another ETag.', { type: 'string', maxLength: 32, pattern: '^[0-9A-Za-z._-]{1,32}$' }) }

export function jsonResponse (schema: TSchema, description: string, example: unknown, headers: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    description,
    headers: { ...IDS, ...RATE_LIMIT, ...headers },
    content: { 'application/json': { schema, example } },
  }
}

const NO_STORE = header('`no-store`: the answer of a write (it may hold a secret) is not to be kept.', { type: 'string', enum: ['no-store'] })

const REPLAYED = header('`true` when this is the answer to an earlier request with the same `Idempotency-Key`, sent again: nothing was done this time.', { type: 'string', enum: ['true'] })

/** A 2xx of a write: the body, not to be stored; of a POST taking an Idempotency-Key, perhaps replayed. */
export function writeResponse (schema: TSchema, description: string, example: unknown, options: { replayable?: boolean } = {}): Record<string, unknown> {
  return jsonResponse(schema, description, example, { 'Cache-Control': NO_STORE, ...(options.replayable === true ? { 'Idempotent-Replayed': REPLAYED } : {}) })
}

/** A 200 of a GET: the body, with its ETag (and `headers` of the operation's own). */
export function okResponse (schema: TSchema, description: string, example: unknown, headers: Record<string, unknown> = {}): Record<string, unknown> {
  return jsonResponse(schema, description, example, { ETag: ETAG, 'Cache-Control': CACHE_CONTROL, ...headers })
}

/** A 304: no body, the ETag, and `headers` of the operation's own. */
export const notModifiedWith = (headers: Record<string, unknown>) => ({
  type: 'null',
  description: 'Not modified: the `If-None-Match` ETag is still current. No body.',
  headers: { ...IDS, ...RATE_LIMIT, ETag: ETAG, 'Cache-Control': CACHE_CONTROL, ...headers },
})

export const notModifiedResponse = notModifiedWith({})

/** A 204: done, nothing to say. */
export const noContentResponse = (description: string) => ({
  type: 'null',
  description,
  headers: { ...IDS, ...RATE_LIMIT },
})

const DESCRIPTIONS: Partial<Record<ErrorStatus, string>> = {
  400: 'A path, query or header value is invalid; `details` names each one.',
  401: 'Missing, malformed, unknown, revoked or expired API key. Comes with `WWW-Authenticate: Bearer`.',
  403: 'Pro subscription required; the body links to the billing page.',
  404: 'Not found.',
  409: 'The request conflicts with the state of what it names; `code` says why.',
  422: 'The `Idempotency-Key` was used with another request (`idempotency_key_reused`).',
  410: `The sync token is older than the change log keeps changes (${SYNC_RETENTION} ${UNLESS_DEPLOYMENT}), or was expired by the operator (after a restore of the database): walk the list again from its first page for a new one.`,
  408: `The request line and headers did not arrive within ${HEADERS_TIMEOUT_MS / 1000} s. The connection is closed. No rate-limit headers: it is refused before authentication.`,
  414: `The URL is too long: over ${MAX_URL_LENGTH} characters in all, a query string over ${MAX_QUERY_LENGTH}, or a path segment over ${MAX_PARAM_LENGTH}. No rate-limit headers: it is refused before authentication.`,
  431: `The request line and headers take more than ${MAX_HEADER_BYTES} bytes. The connection is closed. No rate-limit headers: it is refused before authentication.`,
  429: 'Too many requests for this API key; retry after `Retry-After` seconds.',
  500: 'An unexpected error; the message carries no internals. Quote `request_id` when reporting it.',
  503: 'The database is unreachable or timed out; retry after `Retry-After` seconds.',
}

const EXAMPLE_MESSAGES: Partial<Record<ErrorStatus, string>> = {
  400: 'Invalid request: params/jobId must match format "uuid"',
  401: 'A valid API key is required: send `Authorization: Bearer <api key>`.',
  403: 'Pro subscription required',
  404: 'Job not found',
  409: 'The request conflicts with the state of what it names.',
  422: 'This Idempotency-Key was used with another request in the last 24 hours.',
  410: 'This sync token has expired: list the jobs again from the first page to get a new one.',
  408: `Request Timeout: the request line and headers did not arrive within ${HEADERS_TIMEOUT_MS / 1000} s`,
  414: `URI Too Long: the query string is longer than ${MAX_QUERY_LENGTH} characters`,
  431: `Request Header Fields Too Large: the request line and headers may take ${MAX_HEADER_BYTES} bytes`,
  429: 'Rate limit exceeded, retry in 1 minute',
  500: 'Internal server error',
  503: 'Service unavailable, retry later',
}

const EXTRA_HEADERS: Partial<Record<ErrorStatus, Record<string, unknown>>> = {
  401: { 'WWW-Authenticate': header('`Bearer`: the scheme to use.', { type: 'string', enum: ['Bearer'] }) },
  409: { 'Retry-After': header('With `idempotency_key_in_use`: seconds to wait before retrying.', seconds) },
  429: { 'Retry-After': RETRY_AFTER },
  503: { 'Retry-After': RETRY_AFTER },
}

/** An operation's own account of a status: its description, and the code and message of its example. */
export interface ErrorCase { description: string, code: string, error: string }

function errorExample (status: ErrorStatus, own?: ErrorCase): Record<string, unknown> {
  const example: Record<string, unknown> = { error: own?.error ?? EXAMPLE_MESSAGES[status], code: own?.code ?? ERROR_CODES[status], request_id: '4f9c1c1e-8f0a-4c1b-9d7e-3b2a1d0c9e8f' }
  if (status === 400) example.details = [{ path: 'params/jobId', message: 'must match format "uuid"' }]
  if (status === 403) example.upgrade_url = '/dashboard/billing'
  return example
}

/** What any request can get, whatever the operation: its bounds, the rate limit, an outage. */
const EVERY_OPERATION: ErrorStatus[] = [408, 414, 429, 431, 500, 503]

/** Why an operation may answer 403: its key lacks the operation's scope, or its plan lacks Pro. */
export interface Forbidden { scope?: string, plan?: boolean }

const insufficientScopeExample = (scope: string): Record<string, unknown> => ({
  error: `This API key lacks the scope \`${scope}\` that the operation requires.`, code: INSUFFICIENT_SCOPE, required_scope: scope, request_id: '4f9c1c1e-8f0a-4c1b-9d7e-3b2a1d0c9e8f',
})
const scopeDescription = (scope: string): string => `The API key lacks the scope \`${scope}\` (\`insufficient_scope\`, with \`required_scope\`). Decided from the key alone, before anything else is looked at: the same answer whatever the job.`

/**
 * The 403 of an operation: `insufficient_scope` when it needs a scope, `upgrade_required`
 * when it needs Pro, either (told apart by `code`) when it needs both.
 */
function forbiddenResponse ({ scope, plan = false }: Forbidden): Record<string, unknown> {
  if (scope === undefined) return jsonResponse(Type.Ref(UpgradeRequiredSchema), DESCRIPTIONS[403]!, errorExample(403))
  if (!plan) return jsonResponse(Type.Ref(InsufficientScopeSchema), scopeDescription(scope), insufficientScopeExample(scope))
  const response = jsonResponse(
    Type.Union([Type.Ref(InsufficientScopeSchema), Type.Ref(UpgradeRequiredSchema)]),
    `${scopeDescription(scope)} Otherwise, on the free tier: Pro subscription required (\`upgrade_required\`, with \`upgrade_url\`). Switch on \`code\`.`,
    undefined
  ) as { content: { 'application/json': Record<string, unknown> } }
  response.content['application/json'] = {
    schema: response.content['application/json'].schema,
    examples: {
      insufficient_scope: { summary: 'The key lacks the scope', value: insufficientScopeExample(scope) },
      upgrade_required: { summary: 'The organization is on the free tier', value: errorExample(403) },
    },
  }
  return response
}

/**
 * The documented error responses of an operation (its own `statuses` and those of every
 * operation), each with the shared schema and an example; a 403 when `forbidden` names why.
 */
export function errorResponses (statuses: ErrorStatus[], overrides: Partial<Record<ErrorStatus, string | ErrorCase>> = {}, forbidden: Forbidden = {}, options: { replayable?: boolean } = {}): Record<number, unknown> {
  const canForbid = forbidden.scope !== undefined || forbidden.plan === true
  const all = [...new Set([...statuses, ...EVERY_OPERATION, ...(canForbid ? [403 as const] : [])])].sort((a, b) => a - b)
  return Object.fromEntries(all.map(status => [status, status === 403
    ? forbiddenResponse(forbidden)
    : errorResponse(status, overrides[status], options.replayable === true && REPLAYABLE.has(status))]))
}

/** The errors of a POST taking an Idempotency-Key that may be answered again (those its handler answered). */
const REPLAYABLE = new Set<ErrorStatus>([400, 404, 409, 422])

function errorResponse (status: ErrorStatus, own: string | ErrorCase | undefined, replayable: boolean): Record<string, unknown> {
  const description = typeof own === 'string' ? own : own?.description
  return jsonResponse(Type.Ref(ErrorSchema), description ?? DESCRIPTIONS[status] ?? 'Error.', errorExample(status, typeof own === 'object' ? own : undefined), { ...EXTRA_HEADERS[status], ...(replayable ? { 'Idempotent-Replayed': REPLAYED } : {}) })
}
