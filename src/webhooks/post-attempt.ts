import { traceparentOf } from '../telemetry/traceparent.js'
import { failed, inSpan, type SpanOptions } from '../telemetry/tracing.js'
import { delivered, errorOf } from './attempt-result.js'
import type { EgressGuard } from './egress.js'
import { eventBody, type WebhookEvent } from './events.js'
import type { Sent } from './record-attempts.js'
import type { KeyObject } from 'node:crypto'
import { signatureHeader } from './signing.js'

// One attempt: an event signed (Standard Webhooks' headers) and POSTed through the egress
// guard; while tracing is on, in a span of its own whose `traceparent` it sends, so that a
// partner's trace of its receipt continues ours (issue 57).

/**
 * An attempt's span: in the trace of what caused its event when it is a first attempt (the
 * dispatcher's run, a request), else a trace of its own linked to it (a retry, maybe hours on).
 */
const attemptSpan = (endpointId: string, url: string, event: WebhookEvent) => (): SpanOptions => ({
  kind: 'client',
  parent: event.attempt === 1 && event.cause !== undefined ? event.cause : null,
  ...(event.attempt > 1 && event.cause !== undefined ? { links: [event.cause] } : {}),
  attributes: {
    'http.request.method': 'POST',
    'server.address': new URL(url).hostname,
    'screening.webhook.endpoint_id': endpointId,
    'screening.webhook.event_id': event.id,
    'screening.webhook.event_type': event.type,
    'screening.webhook.attempt': event.attempt,
  },
})

/** The attempt, and the trace of its span while tracing is on. */
export async function postAttempt (guard: EgressGuard, endpointId: string, url: string, event: WebhookEvent, keys: KeyObject[], timeoutMs: number): Promise<Sent> {
  return await inSpan(`webhook ${event.type}`, attemptSpan(endpointId, url, event), async span => {
    const body = eventBody(event)
    const timestamp = Math.floor(Date.now() / 1000)
    const headers: Record<string, string> = { 'webhook-id': event.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(keys, event.id, timestamp, body) }
    if (span === undefined) return { event, result: await guard.post(url, headers, body, timeoutMs) }
    const context = span.spanContext()
    headers.traceparent = traceparentOf(context)
    const result = await guard.post(url, headers, body, timeoutMs)
    if (result.status !== undefined) span.setAttribute('http.response.status_code', result.status)
    if (!delivered(result)) failed(span, errorOf(result))
    // An unsampled trace is never exported: the record names only a trace one can find.
    return { event, result, ...((context.traceFlags & 1) === 1 ? { traceId: context.traceId } : {}) }
  })
}
