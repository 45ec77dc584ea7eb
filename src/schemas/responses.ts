import { Type, type TSchema } from '@sinclair/typebox'
import { ERROR_CODES, ErrorSchema, UpgradeRequiredSchema, type ErrorStatus } from './error.js'

// Responses in OpenAPI's own form (description, headers, content with schema and example),
// which @fastify/swagger passes through and Fastify's serializer understands.

const REQUEST_ID = { type: 'string', description: 'Identifier of the request: the one sent, when sane, or a generated one.' }
const ETAG = { type: 'string', description: 'Entity tag of the body; send it back in `If-None-Match`.' }
const CACHE_CONTROL = { type: 'string', description: '`private, no-cache`: revalidate every time.' }

export function jsonResponse (schema: TSchema, description: string, example: unknown, headers: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    description,
    headers: { 'x-request-id': REQUEST_ID, ...headers },
    content: { 'application/json': { schema, example } },
  }
}

/** A 200 of a GET: the body, with its ETag. */
export function okResponse (schema: TSchema, description: string, example: unknown): Record<string, unknown> {
  return jsonResponse(schema, description, example, { etag: ETAG, 'cache-control': CACHE_CONTROL })
}

export const notModifiedResponse = {
  type: 'null',
  description: 'Not modified: the `If-None-Match` ETag is still current. No body.',
  headers: { 'x-request-id': REQUEST_ID, etag: ETAG, 'cache-control': CACHE_CONTROL },
}

const DESCRIPTIONS: Partial<Record<ErrorStatus, string>> = {
  400: 'A path, query or header value is invalid; `details` names each one.',
  401: 'Missing, malformed, unknown, revoked or expired API key. Comes with `WWW-Authenticate: Bearer`.',
  403: 'Pro subscription required; the body links to the billing page.',
  404: 'Not found.',
  414: 'A path segment is longer than 500 characters.',
  429: 'Too many requests for this API key; retry after `Retry-After` seconds.',
  500: 'An unexpected error; the message carries no internals. Quote `request_id` when reporting it.',
  503: 'The database is unreachable or timed out; retry after `Retry-After` seconds.',
}

const EXAMPLE_MESSAGES: Partial<Record<ErrorStatus, string>> = {
  400: 'Invalid request: params/jobId must match format "uuid"',
  401: 'A valid API key is required: send `Authorization: Bearer <api key>`.',
  403: 'Pro subscription required',
  404: 'Job not found',
  414: 'URI Too Long: a path segment is longer than 500 characters',
  429: 'Rate limit exceeded, retry in 1 minute',
  500: 'Internal server error',
  503: 'Service unavailable, retry later',
}

const EXTRA_HEADERS: Partial<Record<ErrorStatus, Record<string, unknown>>> = {
  401: { 'www-authenticate': { type: 'string', description: '`Bearer`.' } },
  429: { 'retry-after': { type: 'string', description: 'Seconds to wait.' } },
  503: { 'retry-after': { type: 'string', description: 'Seconds to wait.' } },
}

function errorExample (status: ErrorStatus): Record<string, unknown> {
  const example: Record<string, unknown> = { error: EXAMPLE_MESSAGES[status], code: ERROR_CODES[status], request_id: '4f9c1c1e-8f0a-4c1b-9d7e-3b2a1d0c9e8f' }
  if (status === 400) example.details = [{ path: 'params/jobId', message: 'must match format "uuid"' }]
  if (status === 403) example.upgrade_url = '/dashboard/billing'
  return example
}

/** The documented error responses of an operation, each with the shared schema and an example. */
export function errorResponses (statuses: ErrorStatus[], overrides: Partial<Record<ErrorStatus, string>> = {}): Record<number, unknown> {
  return Object.fromEntries(statuses.map(status => [status, jsonResponse(
    Type.Ref(status === 403 ? UpgradeRequiredSchema : ErrorSchema),
    overrides[status] ?? DESCRIPTIONS[status] ?? 'Error.',
    errorExample(status),
    EXTRA_HEADERS[status],
  )]))
}
