import { Type, type Static } from '@sinclair/typebox'
import type { Prisma } from '../db/database.js'
import { OrNull } from '../db/row-schemas.js'
import type { SqlReader } from '../db/sql-reader.js'
import { empty, sql, type Sql } from '../db/sql.js'
import type { WebhookDelivery } from '../schemas/webhooks.js'

// An endpoint's delivery record: a row per attempt (webhook_deliveries), and a row per batch
// of first attempts delivered (webhook_delivery_batches, whose attempt i has the row's id with
// i in its last 16 bits), read as one: its pages and the retention (sending again:
// recovery.ts). Each query is scoped to the caller's organization through the endpoint.

/**
 * The attempts of the batches among `batches` (SQL), one row each, as webhook_deliveries has
 * them: of each batch, the newest `cap` (all when undefined) of those before `after`.
 */
export const batchAttempts = (batches: Sql, cap: number | undefined, after?: { at: Date, id: string }): Sql => sql`
  SELECT u.id, u.event_id, u.event_type, u.job_id, b.event_at,
         1 AS attempt, 'delivered' AS outcome, u.status_code, NULL::text AS error, u.duration_ms, b.attempted_at, NULL::timestamptz AS next_attempt_at, b.trace_id
  FROM (${batches}) b CROSS JOIN LATERAL (
    SELECT * FROM (
      SELECT overlay(b.id::text placing lpad(to_hex(x.o::int), 4, '0') from 33)::uuid AS id, x.*
      FROM unnest(b.event_ids, b.event_types, b.job_ids, b.status_codes, b.durations_ms) WITH ORDINALITY AS x(event_id, event_type, job_id, status_code, duration_ms, o)
    ) numbered
    ${after === undefined ? empty : sql`WHERE (b.attempted_at, numbered.id) < (${after.at}::timestamptz, ${after.id}::uuid)`}
    ORDER BY o DESC ${cap === undefined ? empty : sql`LIMIT ${cap}`}) u`

const COLUMNS = sql`id, event_id AS "eventId", event_type AS "eventType", job_id AS "jobId", event_at AS "eventAt", attempt, outcome,
  status_code AS "statusCode", error, duration_ms AS "durationMs", attempted_at AS "attemptedAt", next_attempt_at AS "nextAttemptAt", trace_id AS "traceId"`

/** An attempt as COLUMNS names it, from either table (test/db/row-types.test.ts checks it). */
const DeliveryRow = Type.Object({
  id: Type.String(),
  eventId: Type.String(),
  eventType: Type.String(),
  jobId: OrNull(Type.String()),
  eventAt: Type.Date(),
  attempt: Type.Integer(),
  outcome: Type.String(),
  statusCode: OrNull(Type.Integer()),
  error: OrNull(Type.String()),
  durationMs: OrNull(Type.Integer()),
  attemptedAt: Type.Date(),
  nextAttemptAt: OrNull(Type.Date()),
  traceId: OrNull(Type.String()),
})
type Row = Static<typeof DeliveryRow>

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
  trace_id: row.traceId,
})

/** The endpoint, if it is the organization's: whether it is enabled, and why not. */
export async function endpointState (prisma: Prisma, organizationId: string, endpointId: string): Promise<{ enabled: boolean, disabledReason: string | null } | null> {
  const row = await prisma.webhookEndpoint.findFirst({ where: { id: endpointId, organizationId }, select: { status: true, disabledReason: true } })
  return row === null ? null : { enabled: row.status === 'enabled', disabledReason: row.disabledReason }
}

/** A page of an endpoint's attempts, newest first (the endpoint must be the caller's: endpointState first). */
export async function listDeliveries (reader: SqlReader, endpointId: string, limit: number, after?: { at: Date, id: string }): Promise<{ deliveries: WebhookDelivery[], last?: { at: Date, id: string }, hasMore: boolean }> {
  // Newest first in each table (the batches: at most limit + 1 of them, and of each at most
  // limit + 1 attempts), then together.
  const take = limit + 1
  const before = after === undefined ? sql`true` : sql`(attempted_at, id) < (${after.at}::timestamptz, ${after.id}::uuid)`
  // A batch with an attempt before the cursor (its id's last 16 bits aside, at most the cursor's).
  const batchBefore = after === undefined ? sql`true` : sql`(attempted_at, id) <= (${after.at}::timestamptz, overlay(${after.id}::uuid::text placing 'ffff' from 33)::uuid)`
  const rows = await reader.rows(DeliveryRow, sql`
    SELECT ${COLUMNS} FROM (
      (SELECT id, event_id, event_type, job_id, event_at, attempt, outcome, status_code, error, duration_ms, attempted_at, next_attempt_at, trace_id
       FROM webhook_deliveries WHERE endpoint_id = ${endpointId}::uuid AND ${before} ORDER BY attempted_at DESC, id DESC LIMIT ${take})
      UNION ALL
      ${batchAttempts(sql`SELECT * FROM webhook_delivery_batches WHERE endpoint_id = ${endpointId}::uuid AND ${batchBefore} ORDER BY attempted_at DESC, id DESC LIMIT ${take}`, take, after)}
    ) attempts ORDER BY attempted_at DESC, id DESC LIMIT ${take}`)
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { deliveries: page.map(present), hasMore: rows.length > limit, ...(last !== undefined ? { last: { at: last.attemptedAt, id: last.id } } : {}) }
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
    for (;;) {
      const count = await prisma.$executeRaw`
        DELETE FROM webhook_delivery_batches WHERE id IN (
          SELECT id FROM webhook_delivery_batches WHERE endpoint_id = ${id}::uuid AND attempted_at < now() - make_interval(days => ${days}::int) LIMIT 100)`
      if (count < 100) break
    }
  }
  return removed
}
