import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { ApiError, invalidRequest } from '../errors.js'
import { webhookEndpointExample, webhookSecretExample } from '../schemas/examples.js'
import { ConditionalHeaders } from '../schemas/params.js'
import { errorResponses, noContentResponse, notModifiedResponse, okResponse, writeResponse } from '../schemas/responses.js'
import {
  CreateWebhookEndpointBody, EndpointParams, ListQuery, RotateSecretBody, UpdateWebhookEndpointBody,
  WebhookEndpointCreatedSchema, WebhookEndpointListSchema, WebhookEndpointSchema, WebhookSecretRotatedSchema,
} from '../schemas/webhooks.js'
import type { SignedJson } from '../signed-json.js'
import type { RefusalLog } from './egress.js'
import { IdempotencyHeaders, idempotencyErrors } from './idempotency.js'
import { createEndpoint, deleteEndpoint, DISABLED_BY_OPERATOR, ENDPOINT_LIMIT, findEndpoint, listEndpoints, rotateSecret, updateEndpoint } from './endpoints.js'
import { ListCursors } from './list-cursor.js'
import type { Webhooks } from './webhooks.js'

// /api/webhook_endpoints: the organization's endpoints, managed by the partner (issue 41).

export const endpointNotFound = (): ApiError => new ApiError(404, 'Webhook endpoint not found')

/**
 * A body's fields the route does not know are refused (400), not dropped as the validator
 * drops unknown query parameters: a misspelt `evnts` would otherwise make an endpoint told of
 * every event. Before validation, which removes them.
 */
export const knownFieldsOnly = (schema: { properties: Record<string, unknown> }) => async (request: { body: unknown }): Promise<void> => {
  const body = request.body
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return
  const unknown = Object.keys(body).filter(key => !(key in schema.properties))
  if (unknown.length > 0) throw invalidRequest(unknown.slice(0, 20).map(key => ({ path: `body/${key}`, message: 'is not a field of this operation' })))
}
const NOT_FOUND = { 404: 'No such endpoint in the caller\'s organization (missing, or another organization\'s).' }
const BODY_400 = { 400: 'A path, query or body value is invalid (`details` names each one): a URL that is not https, or not at a public address, is refused here.' }
const tags = ['Webhook endpoints']

const createWebhookEndpointSchema = {
  operationId: 'createWebhookEndpoint',
  summary: 'Create a webhook endpoint',
  description: 'Starts sending the organization\'s job changes (from now on) to `url`, as events signed per Standard Webhooks with the `secret` answered here, once. The endpoint is told what the calling key may read: a change of what only a job\'s analytics show only when the key has `analytics:read` on the Pro plan, nothing once the key is revoked. Needs `webhooks:write` and `jobs:read`.',
  tags,
  security: [{ bearerAuth: ['webhooks:write', 'jobs:read'] }],
  headers: IdempotencyHeaders,
  body: CreateWebhookEndpointBody,
  response: {
    201: writeResponse(Type.Ref(WebhookEndpointCreatedSchema), 'The new endpoint, with its signing secret.', { id: webhookEndpointExample.id, url: webhookEndpointExample.url, events: webhookEndpointExample.events, description: webhookEndpointExample.description, status: 'enabled', secret: webhookSecretExample, created_at: webhookEndpointExample.created_at }, { replayable: true }),
    ...errorResponses([400, 401, 409, 422], { ...BODY_400, ...idempotencyErrors(ENDPOINT_LIMIT) }, { scope: 'webhooks:write' }, { replayable: true }),
  },
}

const listWebhookEndpointsSchema = {
  operationId: 'listWebhookEndpoints',
  summary: 'List webhook endpoints',
  description: 'The organization\'s endpoints, newest first, `limit` per page; pass `next_cursor` as `cursor` for the next. Needs `webhooks:read`.',
  tags,
  security: [{ bearerAuth: ['webhooks:read'] }],
  querystring: ListQuery,
  headers: ConditionalHeaders,
  response: {
    200: okResponse(Type.Ref(WebhookEndpointListSchema), 'A page of endpoints.', { data: [webhookEndpointExample], next_cursor: null }),
    304: notModifiedResponse,
    ...errorResponses([400, 401], {}, { scope: 'webhooks:read' }),
  },
}

const getWebhookEndpointSchema = {
  operationId: 'getWebhookEndpoint',
  summary: 'Get a webhook endpoint',
  description: 'One of the organization\'s endpoints (never its secret). Needs `webhooks:read`.',
  tags,
  security: [{ bearerAuth: ['webhooks:read'] }],
  params: EndpointParams,
  headers: ConditionalHeaders,
  response: {
    200: okResponse(Type.Ref(WebhookEndpointSchema), 'The endpoint.', webhookEndpointExample),
    304: notModifiedResponse,
    ...errorResponses([400, 401, 404], NOT_FOUND, { scope: 'webhooks:read' }),
  },
}

const updateWebhookEndpointSchema = {
  operationId: 'updateWebhookEndpoint',
  summary: 'Change a webhook endpoint',
  description: 'Changes its `url` (checked as at creation), `events`, `description`, or `status`: `disabled` stops sending; `enabled` starts again from where it stopped (what changed meanwhile is sent). A new `url` or `enabled` makes it told what the calling key may read. Needs `webhooks:write` and `jobs:read`.',
  tags,
  security: [{ bearerAuth: ['webhooks:write', 'jobs:read'] }],
  params: EndpointParams,
  body: UpdateWebhookEndpointBody,
  response: {
    200: writeResponse(Type.Ref(WebhookEndpointSchema), 'The endpoint, changed.', webhookEndpointExample),
    ...errorResponses([400, 401, 404, 409], { ...BODY_400, ...NOT_FOUND, 409: DISABLED_BY_OPERATOR }, { scope: 'webhooks:write' }),
  },
}

const deleteWebhookEndpointSchema = {
  operationId: 'deleteWebhookEndpoint',
  summary: 'Delete a webhook endpoint',
  description: 'Deletes the endpoint and its delivery record; nothing more is sent to it. Needs `webhooks:write`.',
  tags,
  security: [{ bearerAuth: ['webhooks:write'] }],
  params: EndpointParams,
  response: {
    204: noContentResponse('Deleted.'),
    ...errorResponses([400, 401, 404], NOT_FOUND, { scope: 'webhooks:write' }),
  },
}

const rotateWebhookSecretSchema = {
  operationId: 'rotateWebhookSecret',
  summary: 'Rotate a webhook endpoint\'s secret',
  description: 'A new signing secret, answered once. For `grace_seconds` (24 hours by default; 0 after a leak) the previous secret signs every delivery too: `webhook-signature` carries both, so a receiver verifies with either while it switches. Needs `webhooks:write`.',
  tags,
  security: [{ bearerAuth: ['webhooks:write'] }],
  params: EndpointParams,
  headers: IdempotencyHeaders,
  body: RotateSecretBody,
  response: {
    200: writeResponse(Type.Ref(WebhookSecretRotatedSchema), 'The new secret.', { secret: webhookSecretExample, previous_secret_expires_at: '2026-11-28T09:00:00.000Z' }, { replayable: true }),
    ...errorResponses([400, 401, 404, 409, 422], { ...NOT_FOUND, ...idempotencyErrors() }, { scope: 'webhooks:write' }, { replayable: true }),
  },
}

const endpointRoutes: FastifyPluginAsyncTypebox<{ webhooks: Webhooks, signer: SignedJson }> = async (app, { webhooks, signer }) => {
  const cursors = new ListCursors(signer, 'webhook-endpoints')
  const caller = (request: { caller: { organization: { id: string }, apiKeyId: string }, log: RefusalLog }) => ({ organizationId: request.caller.organization.id, apiKeyId: request.caller.apiKeyId, log: request.log })

  app.post('/webhook_endpoints', {
    preValidation: knownFieldsOnly(CreateWebhookEndpointBody),
    schema: createWebhookEndpointSchema,
  }, async (request, reply) => {
    const created = await createEndpoint(app.database.prisma, webhooks, caller(request), request.body)
    webhooks.inUse()
    reply.code(201)
    return created
  })

  app.get('/webhook_endpoints', {
    schema: listWebhookEndpointsSchema,
  }, async request => {
    const organizationId = request.caller.organization.id
    const { limit = 20, cursor } = request.query
    const after = cursor === undefined ? undefined : cursors.decode(cursor, organizationId, undefined)
    if (cursor !== undefined && after === undefined) throw invalidRequest([{ path: 'querystring/cursor', message: 'is not a cursor of this list (altered, or made for another organization)' }])
    const page = await listEndpoints(app.database.prisma, organizationId, limit, after === undefined ? undefined : { createdAt: after.at, id: after.id })
    return { data: page.endpoints, next_cursor: page.hasMore && page.last !== undefined ? cursors.encode(organizationId, undefined, { at: page.last.createdAt, id: page.last.id }) : null }
  })

  app.get('/webhook_endpoints/:endpointId', {
    schema: getWebhookEndpointSchema,
  }, async request => {
    const found = await findEndpoint(app.database.prisma, request.caller.organization.id, request.params.endpointId)
    if (found === null) throw endpointNotFound()
    return found
  })

  app.patch('/webhook_endpoints/:endpointId', {
    preValidation: knownFieldsOnly(UpdateWebhookEndpointBody),
    schema: updateWebhookEndpointSchema,
  }, async request => {
    const updated = await updateEndpoint(app.database.prisma, webhooks, caller(request), request.params.endpointId, request.body)
    if (updated === null) throw endpointNotFound()
    if (updated.status === 'enabled') webhooks.inUse()
    return updated
  })

  app.delete('/webhook_endpoints/:endpointId', {
    schema: deleteWebhookEndpointSchema,
  }, async (request, reply) => {
    if (!await deleteEndpoint(app.database.prisma, request.caller.organization.id, request.params.endpointId)) throw endpointNotFound()
    return await reply.code(204).send()
  })

  app.post('/webhook_endpoints/:endpointId/rotate_secret', {
    preValidation: knownFieldsOnly(RotateSecretBody),
    schema: rotateWebhookSecretSchema,
  }, async request => {
    const rotated = await rotateSecret(app.database.prisma, webhooks, request.caller.organization.id, request.params.endpointId, request.body?.grace_seconds ?? 86_400)
    if (rotated === null) throw endpointNotFound()
    return { secret: rotated.secret, previous_secret_expires_at: rotated.previousUntil?.toISOString() ?? null }
  })
}

export default endpointRoutes
