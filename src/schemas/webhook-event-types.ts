import { Type, type Static } from '@sinclair/typebox'
import { DISABLE_AFTER, FAILING_AFTER, UNLESS_DEPLOYMENT } from './deployment-defaults.js'

// The catalogue of the events an endpoint may be sent: one place for the OpenAPI document's
// `webhooks` (src/plugins/openapi.ts) and for GET /api/webhook_event_types, so that the two
// never disagree.

const ENDPOINT_ID = '0b5cd0a4-4c9d-4e8a-9a6e-6d1f2b3c4d5e'
const JOB_ID = '91c1b009-4099-5628-9d13-3aaeb0acf3e9'

export interface EventTypeEntry {
  type: string
  summary: string
  description: string
  /** Whether an endpoint chooses it in `events`; else every endpoint is sent it. */
  subscribable: boolean
  /** The body's `data`, as an example. */
  example: Record<string, unknown>
}

export const WEBHOOK_EVENT_CATALOGUE: EventTypeEntry[] = [
  { type: 'job.updated', subscribable: true, summary: 'A job was created or changed', example: { id: JOB_ID }, description: 'A job of the organization was created, changed (its fields, questions, screens; what only its analytics show, to an endpoint made by a key that may read analytics), or moved into the organization. Read it (GET /api/jobs/{jobId}), or sync.' },
  { type: 'job.deleted', subscribable: true, summary: 'A job was deleted or left', example: { id: JOB_ID }, description: 'A job was deleted, or moved to another organization: it is no longer the organization\'s.' },
  { type: 'webhook.test', subscribable: false, summary: 'A test, on request', example: { id: ENDPOINT_ID }, description: 'Sent when the partner asks (POST /api/webhook_endpoints/{endpointId}/test), to check the endpoint: `data.id` is the endpoint. Answer it as any event; it is not retried.' },
  { type: 'sync.reset', subscribable: false, summary: 'Changes may have been missed', example: { id: ENDPOINT_ID, reason: 'changes_may_have_been_missed' }, description: 'The change log no longer reaches back to where this endpoint\'s events stood (a restore of the database, a stop longer than the log is kept, or the key may now read what earlier events left out): walk the list of jobs again.' },
  { type: 'webhook_endpoint.failing', subscribable: false, summary: 'Another endpoint of the organization is failing', example: { id: ENDPOINT_ID, origin: 'https://partner.example', failing_since: '2026-11-27T08:00:00.000Z', failures: 10 }, description: `Sent to the organization's other enabled endpoints once an endpoint (\`data.id\`; \`data.origin\`, the scheme and host of its URL) has failed a number of attempts in a row (${FAILING_AFTER} ${UNLESS_DEPLOYMENT}), once a failing spell: a delivery to it ends the spell. Fix it before it is disabled (once every delivery to it has failed for ${DISABLE_AFTER}, ${UNLESS_DEPLOYMENT}); its events are retried meanwhile.` },
  { type: 'webhook_endpoint.disabled', subscribable: false, summary: 'Another endpoint of the organization was disabled', example: { id: ENDPOINT_ID, origin: 'https://partner.example', reason: 'failing', failing_since: '2026-11-22T08:00:00.000Z' }, description: `Sent to the organization's other enabled endpoints when an endpoint is disabled by anything but the partner's own request, with \`data.reason\`: \`gone\` (it answered 410), \`failing\` (every attempt failed for ${DISABLE_AFTER}, ${UNLESS_DEPLOYMENT}), \`operator\`, \`key_revoked\` or \`key_moved\` (the key that made it may no longer read the organization). Enable it again (PATCH with \`status: enabled\`), then POST …/recover for what it missed.` },
]

export const WebhookEventTypeSchema = Type.Object({
  type: Type.String({ maxLength: 32, description: 'The event\'s `type`.' }),
  summary: Type.String({ maxLength: 200 }),
  description: Type.String({ maxLength: 2000 }),
  subscribable: Type.Boolean({ description: 'Chosen in an endpoint\'s `events`; false: sent to every endpoint.' }),
}, { $id: 'WebhookEventType', title: 'WebhookEventType', additionalProperties: false })

export const WebhookEventTypeListSchema = Type.Object({
  data: Type.Array(Type.Ref('WebhookEventType'), { maxItems: 100 }),
}, { $id: 'WebhookEventTypeList', title: 'WebhookEventTypeList', description: 'Every event type an endpoint may be sent, as the document\'s `webhooks` describes them.', additionalProperties: false })

export type WebhookEventTypeList = Static<typeof WebhookEventTypeListSchema>
