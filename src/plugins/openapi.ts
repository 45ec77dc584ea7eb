import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { SCOPE_DESCRIPTIONS, SCOPES } from '../auth/scopes.js'
import { ConfigSchema } from '../config.js'
import { WEBHOOK_EVENT_CATALOGUE, type EventTypeEntry } from '../schemas/webhook-event-types.js'
import { version } from '../version.js'
import { BEARER_DESCRIPTION, INTRO, SWAGGER_UI_CSS } from './openapi-intro.js'
import { collapseErrorResponses, downloadUrl } from './swagger-ui-plugins.js'

// The events an endpoint is sent (OpenAPI 3.1's `webhooks`), so that Swagger UI and SDK
// generators show them: one POST per event type, the body the WebhookEvent schema. No tag:
// Swagger UI gives them their own Webhooks section, and a declared tag would be a heading
// of its own beside it (the endpoints' operations are tagged "Webhook endpoints").
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
    parameters: SIGNATURE_HEADERS,
    requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookEvent' }, example: { type, timestamp: '2026-11-27T09:00:01.000Z', data: example } } } },
    responses: { '2XX': { description: 'Received. The body is not read.' } },
    security: [],
  },
})
// The swagger plugin's types take path items of its own OpenAPI typings; these are plain JSON.
const WEBHOOKS = Object.fromEntries(WEBHOOK_EVENT_CATALOGUE.map(entry => [entry.type, webhook(entry)])) as unknown as Record<string, never>

/** Any deployment's or the embedded default's origin: the document's own. */
const SAME_ORIGIN = { url: '/', description: 'The origin this document is served from (local or production)', 'x-internal': false }

const bearerScheme = {
  type: 'http' as const,
  scheme: 'bearer',
  bearerFormat: 'API key',
  description: BEARER_DESCRIPTION,
  // The scopes an operation's requirement may name, with what each allows: OpenAPI 3.1 gives
  // non-OAuth schemes roles but no place to list them (openapi/spectral.mjs checks the roles).
  'x-scopes': Object.fromEntries(SCOPES.map(scope => [scope, SCOPE_DESCRIPTIONS[scope]])),
}

/** The OpenAPI document (generated from the routes' TypeBox schemas) and Swagger UI. */
export default fp(async function openapiPlugin (app: FastifyInstance, { publicUrl }: { publicUrl: string | undefined }) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Screening Read API', version, description: INTRO, contact: { name: 'Screening API team', email: 'api@screening.example' }, license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
      // `/` always (relative to where the document is served: the embedded default or any
      // deployment), after PUBLIC_URL when set: Redocly's no-empty-servers, and generators
      // get a base URL (docs/decisions.md, "servers").
      servers: [
        ...(publicUrl === undefined ? [] : [{ url: publicUrl, description: 'This deployment (production)', 'x-internal': false }]),
        SAME_ORIGIN,
      ] as Array<{ url: string, description: string }>,
      tags: [
        { name: 'Jobs', description: 'Jobs of the caller\'s organization, with their counts and scores: list them, sync what changed (`changed_since`), get one.' },
        { name: 'Analytics', description: 'Completion and score analytics of a job, of many jobs in one call, and of the whole organization. Pro plan only.' },
        { name: 'Account', description: 'The caller: user, organization, subscription and entitlements.' },
        { name: 'Webhook endpoints', description: 'Endpoints the service POSTs the organization\'s job changes to, and their deliveries. The events they are sent are under Webhooks, below.' },
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
    theme: { css: [{ filename: 'theme.css', content: SWAGGER_UI_CSS }] },
    // Operations by path within each tag: list, get, analytics.
    uiConfig: { persistAuthorization: true, docExpansion: 'list', deepLinking: true, displayRequestDuration: true, tryItOutEnabled: true, operationsSorter: 'alpha', plugins: [downloadUrl, collapseErrorResponses] },
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}, { name: 'openapi' })
