import type { Attributes, Span } from '@opentelemetry/api'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Caller } from '../auth/caller.js'
import { redactedUrl } from '../telemetry/redacted-url.js'
import { traceparentOf } from '../telemetry/traceparent.js'
import { tracing } from '../telemetry/tracing.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span while tracing is on (plugins/tracing.ts); undefined while it is off. */
    span?: Span | null
  }
}

/**
 * A server span for every request while tracing is on: a child of the caller's `traceparent`,
 * the request run in its context (its SQL's spans are children), its id in `traceresponse`.
 */
export default fp(async function tracingPlugin (app: FastifyInstance) {
  const t = tracing()
  if (t === undefined) return
  const { api, tracer } = t
  app.decorateRequest('span', null)
  app.addHook('onRequest', (request, reply, done) => {
    const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers)
    const route = request.routeOptions.url
    const url = request.url
    const mark = url.indexOf('?')
    const attributes: Attributes = { 'http.request.method': request.method, 'url.path': mark === -1 ? url : url.slice(0, mark) }
    if (mark !== -1) attributes['url.query'] = redactedUrl(url).slice(mark + 1)
    if (route !== undefined) attributes['http.route'] = route
    const span = tracer.startSpan(route !== undefined ? `${request.method} ${route}` : request.method, { kind: api.SpanKind.SERVER, attributes }, parent)
    request.span = span
    reply.header('traceresponse', traceparentOf(span.spanContext()))
    api.context.with(api.trace.setSpan(parent, span), done)
  })
  // Callback hooks: no promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    const span = request.span
    // Unsampled, or ended by an abort: nothing to add.
    if (span != null && span.isRecording()) {
      const caller = request.caller as Caller | null | undefined // decorated in the /api context only
      span.setAttribute('http.response.status_code', reply.statusCode)
      if (caller != null) span.setAttribute('screening.organization_id', caller.organization.id)
      if (request.keyPrefix !== null) span.setAttribute('screening.key_prefix', request.keyPrefix)
      if (request.refusal !== null) span.setAttribute('screening.refusal', request.refusal)
      if (reply.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR })
      span.end()
    }
    done()
  })
  app.addHook('onRequestAbort', (request, done) => {
    const span = request.span
    if (span != null && span.isRecording()) {
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: 'the client closed the connection' })
      span.end()
    }
    done()
  })
}, { name: 'tracing', dependencies: ['request-log'] })
