import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { SCOPE_DESCRIPTIONS, SCOPES } from '../auth/scopes.js'
import { ConfigSchema } from '../config.js'
import { WEBHOOK_EVENT_CATALOGUE, type EventTypeEntry } from '../schemas/webhook-event-types.js'
import { version } from '../version.js'
import { HEADERS_TIMEOUT_MS, MAX_HEADER_BYTES, MAX_PARAM_LENGTH, MAX_QUERY_LENGTH, MAX_URL_LENGTH } from '../limits.js'

const DESCRIPTION = `Read API of the recruitment screening service: list the organization's jobs, get a job with its counts and average score, and get a job's analytics (Pro plan).

**Authentication.** Every \`/api\` operation takes \`Authorization: Bearer <api key>\`. A missing, malformed, unknown, revoked or expired key gets 401 with \`WWW-Authenticate: Bearer\`. Access is scoped to the key's organization: another organization's job is reported exactly like a job that does not exist (404).

**Scopes.** An organization may limit a key to what an integration needs. Each operation names the scope it needs in its security requirement (\`bearerAuth: ['jobs:read']\`): \`jobs:read\` lists and gets jobs, \`analytics:read\` gets a job's analytics; \`GET /api/me\` needs none and lists the key's \`scopes\`. A key without the operation's scope gets 403 \`insufficient_scope\` with \`required_scope\`, decided from the key alone (before the parameters, the plan and the job are looked at: it reveals nothing about the job). Keys made before scopes existed, and keys made without a choice, have every scope.

**Errors.** Every error is JSON of one shape, \`{ "error": "<message>", "code": "<machine code>", "request_id": "<id>" }\`, plus fields that belong to that error (\`details\` on 400, \`upgrade_url\` on 403). Switch on \`code\`, not on the message.

**Request ids.** Every response carries \`x-request-id\`: the one the request sent, when it is 1 to 128 characters of \`A-Z a-z 0-9 . _ : -\`, or a generated one. Quote it when reporting a problem.

**Rate limits.** Each API key may make \`RATE_LIMIT_MAX\` requests per window of \`RATE_LIMIT_WINDOW_S\` seconds (600 a minute by default), shared by every operation and every instance of the service. Responses carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (seconds); past the limit, 429 \`rate_limited\` with \`Retry-After\`. Failed authentications are limited per client address as well.

**Limits.** A URL may be ${MAX_URL_LENGTH} characters long (its query string ${MAX_QUERY_LENGTH}, a path segment ${MAX_PARAM_LENGTH}), or the answer is 414 \`uri_too_long\`; the request line and headers may take ${MAX_HEADER_BYTES} bytes (431 \`headers_too_large\`) and must arrive within ${HEADERS_TIMEOUT_MS / 1000} s (408 \`request_timeout\`); a page of jobs holds 1 to 100 (\`limit\`). The service answers every request within a bound (${ConfigSchema.properties.REQUEST_TIMEOUT_MS.default / 1000} s by default); past it, or while the database is unreachable, 503 \`unavailable\` with \`Retry-After\`.

**Conditional requests.** Every 200 carries an \`ETag\` and \`Cache-Control: private, no-cache\`. Send the ETag back in \`If-None-Match\`: while nothing changed, the answer is 304 with no body (it still counts toward the rate limit). Dashboards that poll should do this.`

// The events an endpoint is sent (OpenAPI 3.1's `webhooks`), so that Swagger UI and SDK
// generators show them: one POST per event type, the body the WebhookEvent schema.
const SIGNATURE_HEADERS: Array<{ name: string, in: 'header', required: true, description: string, schema: Record<string, unknown> }> = [
  { name: 'webhook-id', in: 'header', required: true, description: 'The event\'s id: the same for every attempt of one change to this endpoint (deduplicate on it).', schema: { type: 'string', maxLength: 64 } },
  { name: 'webhook-timestamp', in: 'header', required: true, description: 'When this attempt was signed, in seconds since the epoch: refuse one too far from now (Standard Webhooks suggests 5 minutes).', schema: { type: 'string', pattern: '^[0-9]{1,12}$', maxLength: 12 } },
  { name: 'webhook-signature', in: 'header', required: true, description: 'Space-separated `v1,<base64 HMAC-SHA256 of "webhook-id.webhook-timestamp.body">`, one per secret that signs (two while a rotation\'s grace lasts): any one verifying is enough.', schema: { type: 'string', maxLength: 512 } },
]
const webhook = ({ type, summary, description, example }: EventTypeEntry) => ({
  post: {
    operationId: `webhook_${type.replace('.', '_')}`,
    summary,
    description: `${description}\n\nSigned per Standard Webhooks 1.0.0 (the \`standardwebhooks\` package verifies it; the SDK's \`verifyWebhook\` too). Delivered at least once, in no guaranteed order; answer 2xx within ${ConfigSchema.properties.WEBHOOK_TIMEOUT_MS.default / 1000} s. Anything else is retried (${ConfigSchema.properties.WEBHOOK_RETRY_DELAYS.default}, with jitter; \`Retry-After\` honoured); a redirect is a failure and is not followed; 410 disables the endpoint.`,
    tags: ['Webhooks'],
    parameters: SIGNATURE_HEADERS,
    requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookEvent' }, example: { type, timestamp: '2026-11-27T09:00:01.000Z', data: example } } } },
    responses: { '2XX': { description: 'Received. The body is not read.' } },
    security: [],
  },
})
// The swagger plugin's types take path items of its own OpenAPI typings; these are plain JSON.
const WEBHOOKS = Object.fromEntries(WEBHOOK_EVENT_CATALOGUE.map(entry => [entry.type, webhook(entry)])) as unknown as Record<string, never>

const bearerScheme = {
  type: 'http' as const,
  scheme: 'bearer',
  bearerFormat: 'API key',
  description: 'An API key, e.g. `srk_AbCd1234_…`, created with `npm run admin -- create-key` (`--scopes` to restrict it). The roles of an operation\'s requirement are the scopes the key needs; `x-scopes` lists them.',
  // The scopes an operation's requirement may name, with what each allows: OpenAPI 3.1 gives
  // non-OAuth schemes roles but no place to list them (openapi/spectral.mjs checks the roles).
  'x-scopes': Object.fromEntries(SCOPES.map(scope => [scope, SCOPE_DESCRIPTIONS[scope]])),
}

/** The OpenAPI document (generated from the routes' TypeBox schemas) and Swagger UI. */
export default fp(async function openapiPlugin (app: FastifyInstance, { publicUrl }: { publicUrl: string | undefined }) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Screening Read API', version, description: DESCRIPTION, contact: { name: 'Screening API team', email: 'api@screening.example' }, license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
      // PUBLIC_URL when set. Otherwise no entry at all, which generators read as "the caller
      // gives the base URL" (relative paths, or a required option): `/`, the spec's implied
      // default, made swagger-typescript-api build `//api/me`; docs/decisions.md has the
      // survey of generators.
      ...(publicUrl === undefined ? {} : { servers: [{ url: publicUrl, description: 'This deployment (production)', 'x-internal': false } as { url: string, description: string }] }),
      tags: [
        { name: 'Jobs', description: 'Jobs of the caller\'s organization, with their counts and scores.' },
        { name: 'Analytics', description: 'Completion and score analytics of a job, of many jobs in one call, and of the whole organization. Pro plan only.' },
        { name: 'Account', description: 'The caller: user, organization, subscription and entitlements.' },
        { name: 'Webhooks', description: 'Endpoints the service POSTs the organization\'s job changes to, and their deliveries. The events are in `webhooks`.' },
      ],
      webhooks: WEBHOOKS,
      components: {
        securitySchemes: {
          bearerAuth: bearerScheme,
        },
      },
      security: [{ bearerAuth: [] }],
    },
    // Shared schemas keep their $id as their name in components.schemas (not def-0, def-1).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` },
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // Operations by path within each tag: list, get, analytics.
    uiConfig: { persistAuthorization: true, docExpansion: 'list', deepLinking: true, displayRequestDuration: true, tryItOutEnabled: true, operationsSorter: 'alpha' },
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}, { name: 'openapi' })
