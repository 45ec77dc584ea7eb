import type { FastifyPluginAsync } from 'fastify'
import { SignedJson } from '../signed-json.js'
import deliveryRoutes from './delivery-routes.js'
import endpointRoutes from './endpoint-routes.js'
import eventTypeRoutes from './event-type-routes.js'
import idempotencyPlugin from './idempotency.js'
import type { Webhooks } from './webhooks.js'

// The webhook endpoints' routes (/api/webhook_endpoints…), registered in the /api context
// like the jobs' (docs/webhooks-design.md), their POSTs behind Idempotency-Key. Their list
// cursors are signed with the app's cursor secret (src/app.ts).

const webhookRoutes: FastifyPluginAsync<{ webhooks: Webhooks, cursorSecret: string | undefined }> = async (app, { webhooks, cursorSecret }) => {
  const signer = new SignedJson(cursorSecret)
  await app.register(idempotencyPlugin, { webhooks })
  await app.register(endpointRoutes, { webhooks, signer })
  await app.register(deliveryRoutes, { webhooks, signer })
  await app.register(eventTypeRoutes)
}

export default webhookRoutes
