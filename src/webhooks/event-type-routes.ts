import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { ConditionalHeaders } from '../schemas/params.js'
import { errorResponses, notModifiedResponse, okResponse } from '../schemas/responses.js'
import { WEBHOOK_EVENT_CATALOGUE, WebhookEventTypeListSchema, type WebhookEventTypeList } from '../schemas/webhook-event-types.js'

// GET /api/webhook_event_types: the catalogue of events, from the definitions the OpenAPI
// document's `webhooks` is made of, so that a partner's code can list what it may be sent.

const CATALOGUE: WebhookEventTypeList = { data: WEBHOOK_EVENT_CATALOGUE.map(({ type, summary, description, subscribable }) => ({ type, summary, description, subscribable })) }

const eventTypeRoutes: FastifyPluginAsyncTypebox = async app => {
  app.get('/webhook_event_types', {
    schema: {
      operationId: 'listWebhookEventTypes',
      summary: 'List the webhook event types',
      description: 'Every event type an endpoint may be sent, with what it means and whether an endpoint chooses it in `events` (`subscribable`) or is sent it whatever it chose. The same catalogue as the document\'s `webhooks`. Needs `webhooks:read`.',
      tags: ['Webhook endpoints'],
      security: [{ bearerAuth: ['webhooks:read'] }],
      headers: ConditionalHeaders,
      response: {
        200: okResponse(Type.Ref(WebhookEventTypeListSchema), 'The catalogue.', { data: CATALOGUE.data.slice(0, 1) }),
        304: notModifiedResponse,
        ...errorResponses([400, 401], {}, { scope: 'webhooks:read' }),
      },
    },
  }, async () => CATALOGUE)
}

export default eventTypeRoutes
