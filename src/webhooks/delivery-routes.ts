import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { ApiError, invalidRequest } from '../errors.js'
import { DELIVERY_RETENTION, UNLESS_DEPLOYMENT } from '../schemas/deployment-defaults.js'
import { webhookDeliveryExample } from '../schemas/examples.js'
import { ConditionalHeaders } from '../schemas/params.js'
import { errorResponses, notModifiedResponse, okResponse, writeResponse } from '../schemas/responses.js'
import { DeliveryParams, EndpointParams, ListQuery, RecoverBody, TestEventBody, WebhookDeliveryListSchema, WebhookEventsScheduledSchema, WebhookTestResultSchema } from '../schemas/webhooks.js'
import type { SignedJson } from '../signed-json.js'
import { endpointState, listDeliveries } from './deliveries.js'
import { IdempotencyHeaders, idempotencyErrors } from './idempotency.js'
import { recover, RECOVER_MAX, redeliver } from './recovery.js'
import { sendTestEvent } from './test-event.js'
import { endpointNotFound, knownFieldsOnly } from './endpoint-routes.js'
import { DISABLED_BY_OPERATOR, disabledByOperator } from './endpoints.js'
import { ListCursors } from './list-cursor.js'
import type { Webhooks } from './webhooks.js'

// An endpoint's deliveries: the record of every attempt, and sending events again (issue 41).

const NOT_FOUND = { 404: 'No such endpoint (or attempt) in the caller\'s organization.' }
const tags = ['Webhook endpoints']
// What a timestamp may be (RFC 3339's years, in UTC): year 0, which an offset can reach, is
// not PostgreSQL's.
const EARLIEST = Date.parse('0001-01-01T00:00:00Z')
const LATEST = Date.parse('9999-12-31T23:59:59.999Z')
const disabled = (state: { disabledReason: string | null }): ApiError => state.disabledReason === 'operator'
  ? disabledByOperator()
  : invalidRequest([{ path: 'params/endpointId', message: 'is disabled: enable it first (PATCH with status enabled)' }])

const listWebhookDeliveriesSchema = {
  operationId: 'listWebhookDeliveries',
  summary: 'List an endpoint\'s delivery attempts',
  description: `Every attempt to deliver an event to the endpoint, newest first, \`limit\` per page (each kept ${DELIVERY_RETENTION}, ${UNLESS_DEPLOYMENT}): its event, its outcome, the status answered or why there was none, how long it took, and when the event will be tried again. Needs \`webhooks:read\`.`,
  tags,
  security: [{ bearerAuth: ['webhooks:read'] }],
  params: EndpointParams,
  querystring: ListQuery,
  headers: ConditionalHeaders,
  response: {
    200: okResponse(Type.Ref(WebhookDeliveryListSchema), 'A page of attempts.', { data: [webhookDeliveryExample], next_cursor: null }),
    304: notModifiedResponse,
    ...errorResponses([400, 401, 404], NOT_FOUND, { scope: 'webhooks:read' }),
  },
}

const redeliverWebhookEventSchema = {
  operationId: 'redeliverWebhookEvent',
  summary: 'Send an event again',
  description: 'Sends the event of this attempt again, at once, with the same `webhook-id` (a receiver that has it already ignores it), unless it is already queued or being sent, or an attempt after this one delivered it (`skipped`: redeliver that later attempt to send it again), or it is a `webhook_endpoint.*` notice (`skipped`: a notice is not sent again). So calls at once, or a call retried, send it once. The endpoint must be enabled. Needs `webhooks:write`.',
  tags,
  security: [{ bearerAuth: ['webhooks:write'] }],
  params: DeliveryParams,
  headers: IdempotencyHeaders,
  response: {
    202: writeResponse(Type.Ref(WebhookEventsScheduledSchema), 'Scheduled, or skipped (already scheduled, or delivered since).', { scheduled: 1, skipped: 0, more: false }, { replayable: true }),
    ...errorResponses([400, 401, 404, 409, 422], { ...NOT_FOUND, ...idempotencyErrors(DISABLED_BY_OPERATOR) }, { scope: 'webhooks:write' }, { replayable: true }),
  },
}

const recoverWebhookEventsSchema = {
  operationId: 'recoverWebhookEvents',
  summary: 'Send again what failed since a time',
  description: `Sends again, at once, every event whose last attempt since \`since\` failed and will not be tried again: given up after the last retry, or missed while the endpoint was disabled (\`webhook_endpoint.*\` notices excepted: they tell of a moment past). So nothing a disabled endpoint missed is lost: enable it, then recover from when it was disabled. Idempotent: an event already queued or being sent is not queued again (\`skipped\`), so calls at once, or a call retried, send each event once. At most ${RECOVER_MAX} events a call: with \`more\`, call again with the same \`since\` for the rest. The endpoint must be enabled. Needs \`webhooks:write\`.`,
  tags,
  security: [{ bearerAuth: ['webhooks:write'] }],
  params: EndpointParams,
  headers: IdempotencyHeaders,
  body: RecoverBody,
  response: {
    202: writeResponse(Type.Ref(WebhookEventsScheduledSchema), 'Scheduled.', { scheduled: 12, skipped: 3, more: false }, { replayable: true }),
    ...errorResponses([400, 401, 404, 409, 422], { ...NOT_FOUND, ...idempotencyErrors(DISABLED_BY_OPERATOR) }, { scope: 'webhooks:write' }, { replayable: true }),
  },
}

const testWebhookEndpointSchema = {
  operationId: 'testWebhookEndpoint',
  summary: 'Send a test event',
  description: 'Sends the endpoint a `webhook.test` event now, signed as every event is (its body in `webhooks`), and answers how the attempt went: the status the endpoint answered, or why there was none, and how long it took. It is recorded with the deliveries, never retried, and never counts toward disabling the endpoint. So a new endpoint can be checked at once, without waiting for a job to change. The endpoint must be enabled. Needs `webhooks:write`.',
  tags,
  security: [{ bearerAuth: ['webhooks:write'] }],
  params: EndpointParams,
  headers: IdempotencyHeaders,
  body: TestEventBody,
  response: {
    200: writeResponse(Type.Ref(WebhookTestResultSchema), 'The attempt: delivered or not, and why.', { event_id: 'msg_test_Xq3v9Lw0bJf2Zr8kTn4Ypa', delivery_id: '5a1d6f3e-2b7c-4d9e-8f01-a2b3c4d5e6f7', delivered: true, status_code: 204, error: null, duration_ms: 87 }, { replayable: true }),
    ...errorResponses([400, 401, 404, 409, 422], { ...NOT_FOUND, ...idempotencyErrors(DISABLED_BY_OPERATOR) }, { scope: 'webhooks:write' }, { replayable: true }),
  },
}

const deliveryRoutes: FastifyPluginAsyncTypebox<{ webhooks: Webhooks, signer: SignedJson }> = async (app, { webhooks, signer }) => {
  const cursors = new ListCursors(signer, 'webhook-deliveries')

  app.get('/webhook_endpoints/:endpointId/deliveries', {
    schema: listWebhookDeliveriesSchema,
  }, async request => {
    const organizationId = request.caller.organization.id
    const { endpointId } = request.params
    const { limit = 20, cursor } = request.query
    const after = cursor === undefined ? undefined : cursors.decode(cursor, organizationId, endpointId)
    if (cursor !== undefined && after === undefined) throw invalidRequest([{ path: 'querystring/cursor', message: 'is not a cursor of this list (altered, or made for another endpoint)' }])
    if (await endpointState(app.database.prisma, organizationId, endpointId) === null) throw endpointNotFound()
    const page = await listDeliveries(app.database.primary, endpointId, limit, after)
    return { data: page.deliveries, next_cursor: page.hasMore && page.last !== undefined ? cursors.encode(organizationId, endpointId, page.last) : null }
  })

  app.post('/webhook_endpoints/:endpointId/deliveries/:deliveryId/redeliver', {
    schema: redeliverWebhookEventSchema,
  }, async (request, reply) => {
    const state = await endpointState(app.database.prisma, request.caller.organization.id, request.params.endpointId)
    if (state === null) throw endpointNotFound()
    if (!state.enabled) throw disabled(state)
    const done = await redeliver(app.database.prisma, webhooks, request.params.endpointId, request.params.deliveryId)
    if (done === undefined) throw new ApiError(404, 'Webhook delivery not found')
    reply.code(202)
    return done
  })

  app.post('/webhook_endpoints/:endpointId/recover', {
    preValidation: knownFieldsOnly(RecoverBody),
    schema: recoverWebhookEventsSchema,
  }, async (request, reply) => {
    const since = new Date(request.body.since)
    if (!(since.getTime() >= EARLIEST && since.getTime() <= LATEST)) throw invalidRequest([{ path: 'body/since', message: 'must be a date-time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z' }])
    const state = await endpointState(app.database.prisma, request.caller.organization.id, request.params.endpointId)
    if (state === null) throw endpointNotFound()
    if (!state.enabled) throw disabled(state)
    reply.code(202)
    return await recover(app.database.prisma, webhooks, request.params.endpointId, since)
  })

  app.post('/webhook_endpoints/:endpointId/test', {
    preValidation: knownFieldsOnly(TestEventBody),
    schema: testWebhookEndpointSchema,
  }, async request => {
    const state = await endpointState(app.database.prisma, request.caller.organization.id, request.params.endpointId)
    if (state === null) throw endpointNotFound()
    if (!state.enabled) throw disabled(state)
    const result = await sendTestEvent({ primary: app.database.primary, guard: webhooks.guard, secrets: async () => await webhooks.secrets(), timeoutMs: webhooks.settings.testTimeoutMs }, request.params.endpointId)
    if (result === undefined) throw endpointNotFound()
    return result
  })
}

export default deliveryRoutes
