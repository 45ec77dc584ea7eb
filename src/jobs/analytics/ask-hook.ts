import type { Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { invalidRequest } from '../../errors.js'
import type { AnalyticsQuery } from '../../schemas/analytics.js'
import type { ZoneRules } from '../../zones/rules.js'
import { readAnalyticsQuery, type AnalyticsAsk } from './query.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** An analytics request's query, read once (askHook); null on other routes. */
    analyticsAsk: AnalyticsAsk | null
  }
}

/**
 * The preHandler that reads an analytics query once into `request.analyticsAsk`, or answers
 * its 400 (before the plan guard's 403: docs/decisions.md, "Order of checks"). Decorates `app`.
 */
export function askHook (app: FastifyInstance, rules: ZoneRules): (request: FastifyRequest<{ Querystring: Static<typeof AnalyticsQuery> }>) => Promise<void> {
  app.decorateRequest('analyticsAsk', null)
  return async function readAsk (request) {
    const ask = readAnalyticsQuery(request.query, rules)
    if ('problems' in ask) throw invalidRequest(ask.problems)
    request.analyticsAsk = ask
  }
}
