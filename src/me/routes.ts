import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { entitlements } from '../auth/caller.js'
import { MeSchema, type Me } from '../schemas/me.js'
import { meExample } from '../schemas/examples.js'
import { errorResponses, jsonResponse } from '../schemas/responses.js'

const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/me', {
    schema: {
      operationId: 'getMe',
      summary: 'Get the current user',
      description: 'The caller\'s user, organization and subscription, and `entitlements` computed now, so a client can hide Pro features instead of provoking a 403. Answered from the credential check alone: no further database query.',
      tags: ['Account'],
      security: [{ bearerAuth: [] }],
      response: {
        200: jsonResponse(Type.Ref(MeSchema), 'The caller.', meExample),
        ...errorResponses([401]),
      },
    },
  }, async (request): Promise<Me> => {
    const { user, organization, subscription } = request.caller
    return {
      user: { id: user.id, email: user.email, name: user.name, created_at: user.createdAt.toISOString() },
      organization,
      subscription: { plan: subscription.plan, status: subscription.status, current_period_end: subscription.currentPeriodEnd?.toISOString() ?? null },
      entitlements: entitlements(subscription),
    }
  })
}

export default meRoutes
