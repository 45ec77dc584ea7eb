import { Type, type Static } from '@sinclair/typebox'
import { DISABLE_AFTER, UNLESS_DEPLOYMENT } from './deployment-defaults.js'
import { Count, Nullable, StringEnum, Timestamp, Uuid, Word } from './types.js'
import { WEBHOOK_EVENT_CATALOGUE } from './webhook-event-types.js'

// Webhook endpoints, their deliveries, and the events they are sent (issue 41;
// docs/webhooks-design.md). The event types and the statuses are those of src/webhooks/ and
// of the database's CHECK (migration 20261127180000_webhooks).

export const WEBHOOK_EVENT_TYPES = ['job.updated', 'job.deleted'] as const
export const ENDPOINT_STATUSES = ['enabled', 'disabled'] as const
export const DISABLED_REASONS = ['requested', 'gone', 'failing', 'key_revoked', 'key_moved', 'operator'] as const
/** Notices about another endpoint of the organization (src/webhooks/notices.ts); a partner's own disabling is not told. */
export const NOTICE_EVENT_TYPES = ['webhook_endpoint.failing', 'webhook_endpoint.disabled'] as const
const NOTICED_REASONS = DISABLED_REASONS.filter(r => r !== 'requested')
const CURSOR = { minLength: 1, maxLength: 512 }

const Url = (options: Record<string, unknown> = {}) => Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Where events are POSTed: https, at a public address (loopback, private, link-local, cloud metadata and other non-public addresses are refused, when the endpoint is made and again at every connection). No redirect is followed.',
  examples: ['https://partner.example/hooks/screening'],
  ...options,
})
const Events = (options: Record<string, unknown> = {}) => Type.Array(StringEnum(WEBHOOK_EVENT_TYPES), {
  minItems: 1,
  maxItems: 10,
  uniqueItems: true,
  description: `Event types to send (${WEBHOOK_EVENT_TYPES.map(t => `\`${t}\``).join(', ')}); \`sync.reset\` is always sent.`,
  ...options,
})
const Description = Type.String({ maxLength: 500, description: 'Free text, for the partner.' })

export const WebhookEndpointSchema = Type.Object({
  id: Uuid({ description: 'Identifier of the endpoint.' }),
  url: Url(),
  events: Events(),
  description: Nullable(Type.String({ maxLength: 500 }), { description: 'Free text, for the partner.' }),
  status: StringEnum(ENDPOINT_STATUSES, { description: '`enabled`: sent events. `disabled`: sent nothing (see `disabled_reason`); what it misses is recorded as failed deliveries, which `recover` resends once it is enabled again.' }),
  disabled_reason: Nullable(Word(), { description: `Why it is disabled: ${DISABLED_REASONS.map(r => `\`${r}\``).join(', ')} (requested by PATCH; it answered 410 Gone; every delivery failed for ${DISABLE_AFTER} (${UNLESS_DEPLOYMENT}); the key that made it, or enabled it last, was revoked, or its user moved to another organization: enable it with a key of this organization to be told again; an operator, who alone enables it again). Null while enabled. More may be added.` }),
  created_at: Timestamp({ description: 'Creation time.' }),
  updated_at: Timestamp({ description: 'Last change by the partner (or the service disabling it).' }),
}, { $id: 'WebhookEndpoint', title: 'WebhookEndpoint', description: 'A webhook endpoint of the organization: it is told of the organization\'s job changes, as the API key that made it may read them.', additionalProperties: false })

export const SECRET_DESCRIPTION = 'The signing secret (Standard Webhooks: `whsec_` and the base64 of 32 random bytes). Shown only here: keep it to verify `webhook-signature`.'
const Secret = Type.String({ pattern: '^whsec_[A-Za-z0-9+/]{43}=$', maxLength: 64, description: SECRET_DESCRIPTION })

export const WebhookEndpointCreatedSchema = Type.Object({
  id: Uuid({ description: 'Identifier of the endpoint.' }),
  url: Url(),
  events: Events(),
  description: Nullable(Type.String({ maxLength: 500 }), { description: 'Free text, for the partner.' }),
  status: StringEnum(['enabled'] as const, { description: 'A new endpoint is enabled.' }),
  secret: Secret,
  created_at: Timestamp({ description: 'Creation time.' }),
}, { $id: 'WebhookEndpointCreated', title: 'WebhookEndpointCreated', description: 'A new webhook endpoint, with its signing secret (shown this once).', additionalProperties: false })

export const WebhookEndpointListSchema = Type.Object({
  data: Type.Array(Type.Ref(WebhookEndpointSchema), { maxItems: 100, description: 'Endpoints of this page, newest first.' }),
  next_cursor: Nullable(Type.String({ maxLength: 512 }), { description: 'Pass as `cursor` for the next page; null on the last page.' }),
}, { $id: 'WebhookEndpointList', title: 'WebhookEndpointList', description: 'A page of the organization\'s webhook endpoints.', additionalProperties: false })

export const WebhookDeliverySchema = Type.Object({
  id: Uuid({ description: 'Identifier of this attempt (for `redeliver`).' }),
  event_id: Type.String({ maxLength: 64, pattern: '^msg_[A-Za-z0-9_-]{1,60}$', description: 'The event\'s `webhook-id`: the same for every attempt of one change to this endpoint.' }),
  event_type: Word({ maxLength: 32, pattern: '^[a-z_.]+$', description: 'The event\'s type (`job.updated`, `job.deleted`, `sync.reset`, `webhook.test`, `webhook_endpoint.failing`, `webhook_endpoint.disabled`).' }),
  job_id: Nullable(Uuid(), { description: 'The job the event names; null for `sync.reset`.' }),
  attempt: Count({ minimum: 1, description: 'Which attempt of the event this was, from 1.' }),
  outcome: StringEnum(['delivered', 'failed'] as const, { description: '`delivered`: the endpoint answered 2xx. `failed`: anything else (another status, a 3xx included, which is not followed; no answer; the endpoint disabled).' }),
  status_code: Nullable(Type.Integer({ format: 'int32', minimum: 100, maximum: 599 }), { description: 'The status the endpoint answered; null when it did not.' }),
  error: Nullable(Type.String({ maxLength: 500 }), { description: 'Why the attempt failed; null when delivered.' }),
  duration_ms: Nullable(Count(), { description: 'How long the attempt took.' }),
  attempted_at: Timestamp({ description: 'When the attempt was made.' }),
  next_attempt_at: Nullable(Timestamp(), { description: 'When the event will be tried again; null when it will not (delivered, given up after the last retry, or the endpoint disabled: `recover` resends it).' }),
  trace_id: Nullable(Type.String({ minLength: 32, maxLength: 32, pattern: '^[0-9a-f]{32}$' }), { description: 'The trace of the attempt, as its `traceparent` header named it (W3C Trace Context), to find it in the service\'s traces; null when the service was not tracing.' }),
}, { $id: 'WebhookDelivery', title: 'WebhookDelivery', description: 'One attempt to deliver an event to an endpoint.', additionalProperties: false })

export const WebhookDeliveryListSchema = Type.Object({
  data: Type.Array(Type.Ref(WebhookDeliverySchema), { maxItems: 100, description: 'Attempts of this page, newest first.' }),
  next_cursor: Nullable(Type.String({ maxLength: 512 }), { description: 'Pass as `cursor` for the next page; null on the last page.' }),
}, { $id: 'WebhookDeliveryList', title: 'WebhookDeliveryList', description: 'A page of an endpoint\'s delivery attempts, newest first.', additionalProperties: false })

export const WebhookSecretRotatedSchema = Type.Object({
  secret: Secret,
  previous_secret_expires_at: Nullable(Timestamp(), { description: 'Until when the previous secret signs every delivery too (a second `v1,` signature); null when it stopped at once (`grace_seconds` 0).' }),
}, { $id: 'WebhookSecretRotated', title: 'WebhookSecretRotated', description: 'The endpoint\'s new signing secret (shown this once).', additionalProperties: false })

export const WebhookEventsScheduledSchema = Type.Object({
  scheduled: Count({ description: 'Events scheduled to be sent again, at once, by this call.' }),
  skipped: Count({ description: 'Events it would have scheduled that were already queued or being sent (or, for redeliver, delivered since): not sent twice.' }),
  more: Type.Boolean({ description: 'There are more events to recover than one call schedules: call again with the same `since`.' }),
}, { $id: 'WebhookEventsScheduled', title: 'WebhookEventsScheduled', description: 'What a call to send events again did.', additionalProperties: false })

export const WebhookTestResultSchema = Type.Object({
  event_id: Type.String({ maxLength: 64, pattern: '^msg_[A-Za-z0-9_-]{1,60}$', description: 'The test event\'s `webhook-id`.' }),
  delivery_id: Nullable(Uuid(), { description: 'The attempt, as `…/deliveries` lists it (null when the endpoint was deleted meanwhile).' }),
  delivered: Type.Boolean({ description: 'The endpoint answered 2xx.' }),
  status_code: Nullable(Type.Integer({ format: 'int32', minimum: 100, maximum: 599 }), { description: 'The status the endpoint answered; null when it did not.' }),
  error: Nullable(Type.String({ maxLength: 500 }), { description: 'Why it was not delivered; null when it was.' }),
  duration_ms: Count({ description: 'How long the attempt took.' }),
}, { $id: 'WebhookTestResult', title: 'WebhookTestResult', description: 'How the test event\'s attempt went.', additionalProperties: false })

export const CreateWebhookEndpointBody = Type.Object({
  url: Url(),
  events: Type.Optional(Events({ default: [...WEBHOOK_EVENT_TYPES] })),
  description: Type.Optional(Description),
}, { additionalProperties: false })

export const UpdateWebhookEndpointBody = Type.Object({
  url: Type.Optional(Url()),
  events: Type.Optional(Events()),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }), { description: 'Free text, for the partner; null removes it.' })),
  status: Type.Optional(StringEnum(ENDPOINT_STATUSES, { description: '`disabled` stops sending (what is missed meanwhile is recorded as failed, for `recover`); `enabled` starts again, told what the key making this call may read.' })),
}, { additionalProperties: false, minProperties: 1 })

export const RotateSecretBody = Type.Object({
  grace_seconds: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, maximum: 604_800, default: 86_400, description: 'How long the previous secret keeps signing too (both signatures on every delivery), so that the receiver can switch: 24 hours by default, 0 after a leak.' })),
}, { additionalProperties: false })

export const RecoverBody = Type.Object({
  since: Type.String({ format: 'date-time', maxLength: 40, description: 'Resend every event whose last attempt since this time failed and will not be tried again (given up, or missed while the endpoint was disabled).', examples: ['2026-11-27T00:00:00Z'] }),
}, { additionalProperties: false })

/** A test event's request: nothing to say (an empty body, or none). */
export const TestEventBody = Type.Object({}, { additionalProperties: false })

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: 20, description: 'Items per page.' })),
  cursor: Type.Optional(Type.String({ ...CURSOR, description: 'The `next_cursor` of the previous page, unchanged.' })),
}, { additionalProperties: false })

export const EndpointParams = Type.Object({
  endpointId: Uuid({ description: 'Identifier of the webhook endpoint.', examples: ['0b5cd0a4-4c9d-4e8a-9a6e-6d1f2b3c4d5e'] }),
})

export const DeliveryParams = Type.Object({
  endpointId: Uuid({ description: 'Identifier of the webhook endpoint.' }),
  deliveryId: Uuid({ description: 'Identifier of a delivery attempt.' }),
})

/** The body of every event sent (the OpenAPI document's `webhooks`). */
export const WebhookEventSchema = Type.Object({
  type: Type.String({ enum: WEBHOOK_EVENT_CATALOGUE.map(entry => entry.type), description: '`webhook_endpoint.failing` and `webhook_endpoint.disabled`: another endpoint of the organization (`data.id`) is failing or was disabled; sent to its other enabled endpoints whatever their `events`. `webhook.test`: sent on request (POST …/{id}/test), to check the endpoint; `data.id` is the endpoint. `job.updated`: the job was created or changed (its fields, questions, screens, or what its analytics show to a key that may read them), or moved into the organization; read it (GET /api/jobs/{id}) or sync. `job.deleted`: the job was deleted or moved out of the organization. `sync.reset`: changes may have been missed (the change log no longer reaches back to this endpoint\'s position: a restore, or a long stop); walk the list again.' }),
  timestamp: Timestamp({ description: 'When the change was seen.' }),
  data: Type.Object({
    id: Uuid({ description: 'The job; for `sync.reset` and `webhook.test`, the endpoint; for a `webhook_endpoint.*` notice, the endpoint it is about.' }),
    reason: Type.Optional(Type.String({ enum: ['changes_may_have_been_missed', ...NOTICED_REASONS], description: 'For `sync.reset`: `changes_may_have_been_missed`. For `webhook_endpoint.disabled`, why: `gone` (it answered 410), `failing` (every attempt failed for days), `operator`, `key_revoked` or `key_moved` (the key that made it may no longer read the organization).' })),
    origin: Type.Optional(Type.String({ maxLength: 2048, description: 'For a notice: the origin (scheme, host, port) of the URL of the endpoint it is about; never its path or query, which may hold a secret.' })),
    failing_since: Type.Optional(Nullable(Timestamp({ description: 'For a notice: since when every attempt to that endpoint has failed; null if it was not failing.' }))),
    failures: Type.Optional(Count({ description: 'For `webhook_endpoint.failing`: its failed attempts in a row.' })),
  }, { additionalProperties: false }),
}, { $id: 'WebhookEvent', title: 'WebhookEvent', description: 'An event, as POSTed to an endpoint: thin (the job\'s id, never its fields), signed per Standard Webhooks 1.0.0 (`webhook-id`, `webhook-timestamp`, `webhook-signature`). At least once, in no guaranteed order: a retry has the same `webhook-id`. Whatever the type, read the job when told (a 404 means it is gone): the answer then is what is true, whichever event came last.', additionalProperties: false })

export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>
export type WebhookEndpointCreated = Static<typeof WebhookEndpointCreatedSchema>
export type WebhookEndpointList = Static<typeof WebhookEndpointListSchema>
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>
export type WebhookDeliveryList = Static<typeof WebhookDeliveryListSchema>
export type WebhookTestResult = Static<typeof WebhookTestResultSchema>
