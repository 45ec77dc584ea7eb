import { createHash } from 'node:crypto'
import type { NOTICE_EVENT_TYPES } from '../schemas/webhooks.js'

// The events partners are sent (docs/webhooks-design.md): thin, per Standard Webhooks, the
// job's id and never its fields (the partner reads the job, or syncs), so that their order
// and a duplicate do no harm.

/** The types an endpoint may ask for; `sync.reset` is sent to every endpoint when it happens. */
export const EVENT_TYPES = ['job.updated', 'job.deleted'] as const
export type SubscribableType = typeof EVENT_TYPES[number]
/** Notices about the organization's endpoints (notices.ts): sent to its other enabled endpoints, whatever their `events`. */
export type NoticeType = typeof NOTICE_EVENT_TYPES[number]
export type EventType = SubscribableType | 'sync.reset' | 'webhook.test' | NoticeType

/** An event for one endpoint, as a delivery job carries it. */
export interface WebhookEvent {
  /** `webhook-id`: the same for every attempt of this change to this endpoint. */
  id: string
  type: EventType
  /** The job it names; for sync.reset and webhook.test, the endpoint; for a notice, the endpoint it is about. */
  subject: string
  /** A notice's figures, beside `id` in the body's `data`. */
  data?: Record<string, string | number | null>
  /** When the change was seen (ISO 8601): the body's `timestamp`. */
  at: string
  /** Which attempt this is, from 1. */
  attempt: number
  /**
   * The `traceparent` of the span that found the change (the dispatcher's run) or made the
   * event (a request), while tracing is on: its attempts' spans are linked to it. Never sent.
   */
  cause?: string
}

/**
 * `webhook-id` of a change to an endpoint, from the change log's entry (the transaction and
 * the job) in its history and generation (a restore or a lossy failover hands the same
 * transaction ids out again, and expires tokens: a new change never takes a told one's id):
 * never minted per attempt, so that a receiver recognizes a retry.
 */
export function changeEventId (endpointId: string, log: { history: string, generation: number }, xid: string, jobId: string): string {
  return eventId(`${endpointId}:${log.history}:${log.generation}:${xid}:${jobId}`)
}

/** `webhook-id` of a reset, from the point the endpoint's position started over at. */
export function resetEventId (endpointId: string, point: string): string {
  return eventId(`${endpointId}:reset:${point}`)
}

/** `webhook-id` of a notice to an endpoint about another, from when it was claimed. */
export function noticeEventId (recipient: string, type: NoticeType, about: string, at: string): string {
  return eventId(`${recipient}:${type}:${about}:${at}`)
}

const eventId = (of: string): string => 'msg_' + createHash('sha256').update(of).digest('base64url').slice(0, 32)

/** The job an event names, if it names one. */
export const jobOf = (event: Pick<WebhookEvent, 'type' | 'subject'>): string | null => event.type === 'job.updated' || event.type === 'job.deleted' ? event.subject : null

/** The body of an event. */
export function eventBody (event: Pick<WebhookEvent, 'type' | 'subject' | 'at' | 'data'>): string {
  const data = event.type === 'sync.reset'
    ? { id: event.subject, reason: 'changes_may_have_been_missed' }
    : { id: event.subject, ...event.data }
  return JSON.stringify({ type: event.type, timestamp: event.at, data })
}
