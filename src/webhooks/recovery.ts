import type { Prisma } from '../db/database.js'
import { sql } from '../db/sql.js'
import { batchAttempts } from './deliveries.js'
import { DELIVERY_QUEUE, enqueueEvents, queueDb } from './delivery-queue.js'
import { NOTICE_EVENT_TYPES } from '../schemas/webhooks.js'
import type { EventType, WebhookEvent } from './events.js'
import type { Webhooks } from './webhooks.js'

// Sending events again on a partner's request: one attempt's event (redeliver), or every
// event given up since a time (recover). Idempotent (issue 55): an event already queued or in
// flight for the endpoint is not queued again, nor one delivered since, so that calls at once,
// or a call retried, send each webhook-id at most once more; a call's work is bounded and its
// answer says what it did and whether more is left.

/** Events one recover call schedules at most; the answer's `more` says to call again. */
export const RECOVER_MAX = 1000

export interface Scheduled { scheduled: number, skipped: number, more: boolean }

type Tx = Parameters<Parameters<Prisma['$transaction']>[0]>[0]

/** The ids of the endpoint's events queued, waiting for a retry, or being sent now. */
async function scheduledIds (tx: Tx, endpointId: string): Promise<Set<string>> {
  const rows = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT DISTINCT e->>'id' AS id FROM pgboss.job j CROSS JOIN LATERAL jsonb_array_elements(j.data->'events') e
    WHERE j.name = ${DELIVERY_QUEUE} AND j.group_id = ${endpointId} AND j.state IN ('created', 'retry', 'active')`
  return new Set(rows.map(r => r.id))
}

/**
 * Queues `events` of the endpoint but those already scheduled, under a lock of the endpoint's
 * recoveries (an advisory lock: no row a writer or the sender uses is locked), in one
 * transaction: two calls at once cannot both queue an event.
 */
async function scheduleOnce (prisma: Prisma, webhooks: Webhooks, endpointId: string, candidates: (tx: Tx, already: Set<string>) => Promise<{ events: WebhookEvent[], skipped: number }>): Promise<{ scheduled: number, skipped: number }> {
  const boss = await webhooks.queue()
  return await prisma.$transaction(async tx => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended('webhook_recovery:' || ${endpointId}, 0))`
    const { events, skipped } = await candidates(tx, await scheduledIds(tx, endpointId))
    await enqueueEvents(boss, endpointId, events, { db: queueDb(tx) })
    return { scheduled: events.length, skipped }
  }, { maxWait: 5000, timeout: 30_000 })
}

/**
 * Notices are not sent again: they tell of a moment past (the endpoint's state now is GET
 * …/{id}'s), and their record keeps neither the endpoint they were about nor their figures.
 */
const isNotice = (type: string): boolean => (NOTICE_EVENT_TYPES as readonly string[]).includes(type)

/** The event of a row, as its next attempt (the same webhook-id). */
const nextAttempt = (endpointId: string, row: { eventId: string, eventType: string, jobId: string | null, eventAt: Date }, attempt: number): WebhookEvent =>
  ({ id: row.eventId, type: row.eventType as EventType, subject: row.jobId ?? endpointId, at: row.eventAt.toISOString(), attempt })

/**
 * Schedules the event of one attempt again, at once, unless it is scheduled already or an
 * attempt after this one delivered it (redeliver that one to send it again); undefined when
 * the attempt is not the endpoint's.
 */
export async function redeliver (prisma: Prisma, webhooks: Webhooks, endpointId: string, deliveryId: string): Promise<Scheduled | undefined> {
  const [row] = await prisma.$queryRaw<Array<{ eventId: string, eventType: string, jobId: string | null, eventAt: Date, attemptedAt: Date }>>`
    SELECT event_id AS "eventId", event_type AS "eventType", job_id AS "jobId", event_at AS "eventAt", attempted_at AS "attemptedAt" FROM webhook_deliveries WHERE id = ${deliveryId}::uuid AND endpoint_id = ${endpointId}::uuid
    UNION ALL
    SELECT event_id, event_type, job_id, event_at, attempted_at FROM (${batchAttempts(sql`SELECT * FROM webhook_delivery_batches WHERE id = overlay(${deliveryId}::uuid::text placing '0000' from 33)::uuid AND endpoint_id = ${endpointId}::uuid`, undefined)}) a
    WHERE a.id = ${deliveryId}::uuid`
  if (row === undefined) return undefined
  if (isNotice(row.eventType)) return { scheduled: 0, skipped: 1, more: false }
  const done = await scheduleOnce(prisma, webhooks, endpointId, async (tx, already) => {
    if (already.has(row.eventId)) return { events: [], skipped: 1 }
    const [later] = await tx.$queryRaw<Array<{ delivered: boolean | null, attempt: number | null }>>`
      SELECT bool_or(outcome = 'delivered' AND attempted_at > ${row.attemptedAt}) AS delivered, max(attempt)::int AS attempt
      FROM webhook_deliveries WHERE endpoint_id = ${endpointId}::uuid AND event_id = ${row.eventId}`
    // A batch's attempt is the first: later ones, if any, are rows.
    return later?.delivered === true ? { events: [], skipped: 1 } : { events: [nextAttempt(endpointId, row, Math.max(later?.attempt ?? 0, 1) + 1)], skipped: 0 }
  })
  return { ...done, more: false }
}

/**
 * Schedules again, at once, the endpoint's events whose last attempt since `since` failed and
 * will not be tried again (given up, or recorded while the endpoint was disabled), RECOVER_MAX
 * at most: `more` when there are others (the same call again schedules them, skipping these).
 */
export async function recover (prisma: Prisma, webhooks: Webhooks, endpointId: string, since: Date): Promise<Scheduled> {
  let more = false
  // The endpoint's events whose last attempt since `since` failed and will not be tried again.
  const givenUp = sql`
    SELECT * FROM (
      SELECT DISTINCT ON (event_id) event_id, event_type, job_id, event_at, attempt, outcome, next_attempt_at
      FROM webhook_deliveries WHERE endpoint_id = ${endpointId}::uuid AND attempted_at >= ${since} AND NOT (event_type = ANY (${[...NOTICE_EVENT_TYPES]}::text[]))
      ORDER BY event_id, attempted_at DESC, attempt DESC
    ) latest WHERE outcome = 'failed' AND next_attempt_at IS NULL`
  const done = await scheduleOnce(prisma, webhooks, endpointId, async (tx, already) => {
    // Those scheduled already are counted, not read: the limit is of events to schedule.
    const scheduled = [...already]
    const given = await tx.$queryRaw<Array<{ eventId: string, eventType: string, jobId: string | null, eventAt: Date, attempt: number }>>`
      SELECT event_id AS "eventId", event_type AS "eventType", job_id AS "jobId", event_at AS "eventAt", attempt
      FROM (${givenUp}) g WHERE NOT (event_id = ANY (${scheduled}::text[])) ORDER BY event_id LIMIT ${RECOVER_MAX + 1}`
    const [skipped] = scheduled.length === 0 ? [{ n: 0 }] : await tx.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM (${givenUp}) g WHERE event_id = ANY (${scheduled}::text[])`
    more = given.length > RECOVER_MAX
    return { events: given.slice(0, RECOVER_MAX).map(row => nextAttempt(endpointId, row, row.attempt + 1)), skipped: skipped!.n }
  })
  return { ...done, more }
}
