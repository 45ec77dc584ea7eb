import type { Prisma } from '../db/database.js'
import type { WebhookDelivery } from '../schemas/webhooks.js'
import { enqueueEvents } from './delivery-queue.js'
import type { EventType, WebhookEvent } from './events.js'
import type { Webhooks } from './service.js'

// An endpoint's delivery record (one row per attempt): its pages, a redelivery of one event,
// the recovery of every event given up since a time, and the retention. Each query is
// scoped to the caller's organization through the endpoint.

const FIELDS = { id: true, eventId: true, eventType: true, jobId: true, eventAt: true, attempt: true, outcome: true, statusCode: true, error: true, durationMs: true, attemptedAt: true, nextAttemptAt: true } as const

interface Row { id: string, eventId: string, eventType: string, jobId: string | null, eventAt: Date, attempt: number, outcome: string, statusCode: number | null, error: string | null, durationMs: number | null, attemptedAt: Date, nextAttemptAt: Date | null }

const present = (row: Row): WebhookDelivery => ({
  id: row.id,
  event_id: row.eventId,
  event_type: row.eventType,
  job_id: row.jobId,
  attempt: row.attempt,
  outcome: row.outcome as WebhookDelivery['outcome'],
  status_code: row.statusCode,
  error: row.error === null ? null : row.error.slice(0, 500),
  duration_ms: row.durationMs,
  attempted_at: row.attemptedAt.toISOString(),
  next_attempt_at: row.nextAttemptAt === null ? null : row.nextAttemptAt.toISOString(),
})

/** The endpoint, if it is the organization's: whether it is enabled. */
export async function endpointState (prisma: Prisma, organizationId: string, endpointId: string): Promise<{ enabled: boolean } | null> {
  const row = await prisma.webhookEndpoint.findFirst({ where: { id: endpointId, organizationId }, select: { status: true } })
  return row === null ? null : { enabled: row.status === 'enabled' }
}

/** A page of an endpoint's attempts, newest first (the endpoint must be the caller's: endpointState first). */
export async function listDeliveries (prisma: Prisma, endpointId: string, limit: number, after?: { at: Date, id: string }): Promise<{ deliveries: WebhookDelivery[], last?: { at: Date, id: string }, hasMore: boolean }> {
  const rows = await prisma.webhookDelivery.findMany({
    where: { endpointId, ...(after !== undefined ? { OR: [{ attemptedAt: { lt: after.at } }, { attemptedAt: after.at, id: { lt: after.id } }] } : {}) },
    orderBy: [{ attemptedAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
    select: FIELDS,
  })
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { deliveries: page.map(present), hasMore: rows.length > limit, ...(last !== undefined ? { last: { at: last.attemptedAt, id: last.id } } : {}) }
}

/** The event of a row, as its next attempt (the same webhook-id). */
const nextAttempt = (endpointId: string, row: { eventId: string, eventType: string, jobId: string | null, eventAt: Date }, attempt: number): WebhookEvent =>
  ({ id: row.eventId, type: row.eventType as EventType, subject: row.jobId ?? endpointId, at: row.eventAt.toISOString(), attempt })

/** Schedules the event of one attempt again, at once; false when the attempt is not the endpoint's. */
export async function redeliver (prisma: Prisma, webhooks: Webhooks, endpointId: string, deliveryId: string): Promise<boolean> {
  const row = await prisma.webhookDelivery.findFirst({ where: { id: deliveryId, endpointId }, select: { eventId: true, eventType: true, jobId: true, eventAt: true } })
  if (row === null) return false
  const last = await prisma.webhookDelivery.aggregate({ where: { endpointId, eventId: row.eventId }, _max: { attempt: true } })
  await enqueueEvents(await webhooks.queue(), endpointId, [nextAttempt(endpointId, row, (last._max.attempt ?? 0) + 1)])
  return true
}

/**
 * Schedules again, at once, every event of the endpoint whose last attempt since `since`
 * failed and will not be tried again (given up, or recorded while the endpoint was disabled).
 */
export async function recover (prisma: Prisma, webhooks: Webhooks, endpointId: string, since: Date): Promise<number> {
  const given = await prisma.$queryRaw<Array<{ eventId: string, eventType: string, jobId: string | null, eventAt: Date, attempt: number }>>`
    SELECT event_id AS "eventId", event_type AS "eventType", job_id AS "jobId", event_at AS "eventAt", attempt
    FROM (SELECT DISTINCT ON (event_id) event_id, event_type, job_id, event_at, attempt, outcome, next_attempt_at
          FROM webhook_deliveries WHERE endpoint_id = ${endpointId}::uuid AND attempted_at >= ${since}
          ORDER BY event_id, attempted_at DESC, attempt DESC) latest
    WHERE outcome = 'failed' AND next_attempt_at IS NULL`
  await enqueueEvents(await webhooks.queue(), endpointId, given.map(row => nextAttempt(endpointId, row, row.attempt + 1)))
  return given.length
}

/** Deletes the attempts older than `days`, endpoint by endpoint (its index), a batch at a time. */
export async function pruneDeliveries (prisma: Prisma, days: number): Promise<number> {
  let removed = 0
  const endpoints = await prisma.webhookEndpoint.findMany({ select: { id: true } })
  for (const { id } of endpoints) {
    for (;;) {
      const count = await prisma.$executeRaw`
        DELETE FROM webhook_deliveries WHERE id IN (
          SELECT id FROM webhook_deliveries WHERE endpoint_id = ${id}::uuid AND attempted_at < now() - make_interval(days => ${days}::int) LIMIT 10000)`
      removed += count
      if (count < 10000) break
    }
  }
  return removed
}
