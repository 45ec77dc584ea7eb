import type { Prisma } from '../db/database.js'
import { clientReader, type SqlReader } from '../db/sql-reader.js'
import { enqueueEvents, queueDb } from './delivery-queue.js'
import { NOTICE_EVENT_TYPES } from '../schemas/webhooks.js'
import { attemptOf, givenUp, givenUpEvents, givenUpScheduled, laterAttempts, scheduledIds } from './recovery-reads.js'
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

/**
 * Queues `events` of the endpoint but those already scheduled, under a lock of the endpoint's
 * recoveries (an advisory lock: no row a writer or the sender uses is locked), in one
 * transaction: two calls at once cannot both queue an event.
 */
async function scheduleOnce (prisma: Prisma, webhooks: Pick<Webhooks, 'queue'>, endpointId: string, candidates: (reader: SqlReader, already: Set<string>) => Promise<{ events: WebhookEvent[], skipped: number }>): Promise<{ scheduled: number, skipped: number }> {
  const boss = await webhooks.queue()
  return await prisma.$transaction(async tx => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended('webhook_recovery:' || ${endpointId}, 0))`
    const reader = clientReader(tx)
    const { events, skipped } = await candidates(reader, await scheduledIds(reader, endpointId))
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
export async function redeliver (prisma: Prisma, webhooks: Pick<Webhooks, 'queue'>, endpointId: string, deliveryId: string): Promise<Scheduled | undefined> {
  const row = await attemptOf(clientReader(prisma), endpointId, deliveryId)
  if (row === undefined) return undefined
  if (isNotice(row.eventType)) return { scheduled: 0, skipped: 1, more: false }
  const done = await scheduleOnce(prisma, webhooks, endpointId, async (reader, already) => {
    if (already.has(row.eventId)) return { events: [], skipped: 1 }
    const later = await laterAttempts(reader, endpointId, row.eventId, row.attemptedAt)
    // A batch's attempt is the first: later ones, if any, are rows.
    return later.delivered === true ? { events: [], skipped: 1 } : { events: [nextAttempt(endpointId, row, Math.max(later.attempt ?? 0, 1) + 1)], skipped: 0 }
  })
  return { ...done, more: false }
}

/**
 * Schedules again, at once, the endpoint's events whose last attempt since `since` failed and
 * will not be tried again (given up, or recorded while the endpoint was disabled), RECOVER_MAX
 * at most: `more` when there are others (the same call again schedules them, skipping these).
 */
export async function recover (prisma: Prisma, webhooks: Pick<Webhooks, 'queue'>, endpointId: string, since: Date): Promise<Scheduled> {
  let more = false
  const given = givenUp(endpointId, since)
  const done = await scheduleOnce(prisma, webhooks, endpointId, async (reader, already) => {
    // Those scheduled already are counted, not read: the limit is of events to schedule.
    const scheduled = [...already]
    const events = await givenUpEvents(reader, given, scheduled, RECOVER_MAX + 1)
    const skipped = await givenUpScheduled(reader, given, scheduled)
    more = events.length > RECOVER_MAX
    return { events: events.slice(0, RECOVER_MAX).map(row => nextAttempt(endpointId, row, row.attempt + 1)), skipped }
  })
  return { ...done, more }
}
