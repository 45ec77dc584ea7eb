import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { entitlements } from '../auth/caller.js'
import { MeSchema, type Me } from '../schemas/me.js'
import { meExample } from '../schemas/examples.js'
import { ConditionalHeaders } from '../schemas/params.js'
import { errorResponses, notModifiedResponse, okResponse } from '../schemas/responses.js'

const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/me', {
    schema: {
      operationId: 'getMe',
      summary: 'Get the current user',
      description: 'The caller\'s user, organization and subscription, and `entitlements` computed now, so a client can hide Pro features instead of provoking a 403; and the `scopes` of the API key. Answers every valid key, whatever its scopes. Answered from the credential check alone: no further database query.\n\nSend the `ETag` back in `If-None-Match` to get a 304 while nothing in the answer changed (the plan, its period, the user\'s name...). The entitlements are computed at each request, so a 304 also means they are the same.',
      tags: ['Account'],
      security: [{ bearerAuth: [] }],
      headers: ConditionalHeaders,
      response: {
        200: okResponse(Type.Ref(MeSchema), 'The caller.', meExample),
        304: notModifiedResponse,
        ...errorResponses([400, 401]),
      },
    },
  }, async (request): Promise<Me> => {
    const { user, organization, subscription } = request.caller
    return {
      user: { id: user.id, email: user.email, name: user.name, created_at: user.createdAt.toISOString() },
      organization,
      subscription: { plan: subscription.plan, status: subscription.status, current_period_end: subscription.currentPeriodEnd?.toISOString() ?? null },
      entitlements: entitlements(subscription),
      scopes: request.caller.scopes,
    }
  })
}

export default meRoutes
