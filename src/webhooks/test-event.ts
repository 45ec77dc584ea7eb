import { randomBytes } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { SqlReader } from '../db/sql-reader.js'
import { sql } from '../db/sql.js'
import type { WebhookTestResult } from '../schemas/webhooks.js'
import { delivered, errorOf } from './attempt-result.js'
import { deliveryEndpoint, signingSecrets } from './delivery-endpoint.js'
import { RECORD, type Attempt } from './delivery-record.js'
import type { EgressGuard } from './egress.js'
import type { WebhookEvent } from './events.js'
import { postAttempt } from './post-attempt.js'
import { activeTraceparent } from '../telemetry/tracing.js'
import type { SecretBox } from './secrets.js'
import { signingKeys } from './signing.js'

// A test event (issue 55): a partner checks a new endpoint at once, without waiting for a job
// to change. A `webhook.test` event, signed as every event is, POSTed through the egress
// guard while the request waits, recorded with the endpoint's deliveries, and answered: how
// the attempt went. Never retried, and never counted toward disabling the endpoint.

const RecordedRow = Type.Object({ id: Type.String() })

export interface TestEventDeps { primary: SqlReader, guard: EgressGuard, secrets: () => Promise<SecretBox>, timeoutMs: number }

/** Sends the endpoint a test event and records the attempt; undefined when the endpoint is gone. */
export async function sendTestEvent (deps: TestEventDeps, endpointId: string): Promise<WebhookTestResult | undefined> {
  const endpoint = await deliveryEndpoint(deps.primary, endpointId)
  if (endpoint === undefined) return undefined
  const now = new Date()
  // In the request's trace, while tracing is on.
  const cause = activeTraceparent()
  const event: WebhookEvent = { id: `msg_test_${randomBytes(18).toString('base64url')}`, type: 'webhook.test', subject: endpointId, at: now.toISOString(), attempt: 1, ...(cause !== undefined ? { cause } : {}) }
  // The secrets not opening (another WEBHOOK_SECRET_KEY) is the partner's answer too: nothing sent unsigned.
  const keys = signingKeys(signingSecrets(await deps.secrets(), endpointId, endpoint, now))
  const { result, traceId } = await postAttempt(deps.guard, endpointId, endpoint.url, event, keys, deps.timeoutMs)
  const ok = delivered(result)
  const error = errorOf(result)
  const attempt: Attempt = { event, outcome: ok ? 'delivered' : 'failed', statusCode: result.status ?? null, error, durationMs: result.durationMs, nextAttemptAt: null, ...(traceId !== undefined ? { traceId } : {}) }
  const deliveryId = await recordTestAttempt(deps.primary, endpointId, now, attempt)
  return { event_id: event.id, delivery_id: deliveryId ?? null, delivered: ok, status_code: result.status ?? null, error, duration_ms: result.durationMs }
}

/** Records a test event's attempt with the endpoint's deliveries: its id, none once the endpoint is deleted. */
export async function recordTestAttempt (reader: SqlReader, endpointId: string, at: Date, attempt: Attempt): Promise<string | undefined> {
  const [recorded] = await reader.rows(RecordedRow, sql`${RECORD(endpointId, at, [attempt])} RETURNING id::text AS id`)
  return recorded?.id
}
