import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Caller } from '../auth/caller.js'
import { redactedUrl } from '../telemetry/redacted-url.js'
import { traceIdOf } from '../telemetry/traceparent.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The calling key's public prefix, once the auth hook has read one (never the key). */
    keyPrefix: string | null
    /** Why the request was refused, for its log line: more precise than the body's code (a 401's). */
    refusal: string | null
  }
}

const INFO_OR_BELOW = new Set(['info', 'debug', 'trace'])

/** The one line a request leaves (Fastify's two are off: `disableRequestLogging`). */
function requestLine (request: FastifyRequest, reply: FastifyReply): Record<string, unknown> {
  const caller = request.caller as Caller | null | undefined // decorated in the /api context only
  const line: Record<string, unknown> = {
    method: request.method,
    route: request.routeOptions.url ?? null,
    url: redactedUrl(request.url),
    status: reply.statusCode,
    duration_ms: Math.round(reply.elapsedTime * 10) / 10,
  }
  if (caller != null) line.organization_id = caller.organization.id
  if (request.keyPrefix !== null) line.key_prefix = request.keyPrefix
  if (request.refusal !== null) line.reason = request.refusal
  // The request's own trace while tracing is on, else the caller's.
  const traceId = request.span?.spanContext().traceId ?? traceIdOf(request.headers.traceparent)
  if (traceId !== undefined) line.trace_id = traceId
  return line
}

/**
 * Every request logged once, when its response is sent: what an operator searches by (route
 * template, status, organization, key prefix, request and trace id, a refusal's reason), with
 * the query's tokens and cursors redacted.
 */
export default fp(async function requestLogPlugin (app: FastifyInstance) {
  app.decorateRequest('keyPrefix', null)
  app.decorateRequest('refusal', null)
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode >= 500) request.log.error(requestLine(request, reply), 'request completed')
    else if (INFO_OR_BELOW.has(request.log.level)) request.log.info(requestLine(request, reply), 'request completed')
  })
}, { name: 'request-log' })
