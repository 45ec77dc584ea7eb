import { Type, type Static } from '@sinclair/typebox'
import { OrNull } from '../db/row-schemas.js'
import { sql, type Sql } from '../db/sql.js'
import type { SqlReader } from '../db/sql-reader.js'
import { NOTICE_EVENT_TYPES } from '../schemas/webhooks.js'
import { batchAttempts } from './deliveries.js'
import { DELIVERY_QUEUE } from './delivery-queue.js'

// What recovery.ts reads: the endpoint's events scheduled already, the attempt a redelivery
// sends again and the attempts after it, and the events a recovery sends again.

const IdRow = Type.Object({ id: Type.String() })

/** The ids of the endpoint's events queued, waiting for a retry, or being sent now. */
export async function scheduledIds (reader: SqlReader, endpointId: string): Promise<Set<string>> {
  const rows = await reader.rows(IdRow, sql`
    SELECT DISTINCT e->>'id' AS id FROM pgboss.job j CROSS JOIN LATERAL jsonb_array_elements(j.data->'events') e
    WHERE j.name = ${DELIVERY_QUEUE} AND j.group_id = ${endpointId} AND j.state IN ('created', 'retry', 'active')`)
  return new Set(rows.map(r => r.id))
}

const AttemptRow = Type.Object({ eventId: Type.String(), eventType: Type.String(), jobId: OrNull(Type.String()), eventAt: Type.Date(), attemptedAt: Type.Date() })
export type Attempt = Static<typeof AttemptRow>

/** One attempt of the endpoint's, a row's or a batch's; undefined when it is not the endpoint's. */
export async function attemptOf (reader: SqlReader, endpointId: string, deliveryId: string): Promise<Attempt | undefined> {
  const [row] = await reader.rows(AttemptRow, sql`
    SELECT event_id AS "eventId", event_type AS "eventType", job_id AS "jobId", event_at AS "eventAt", attempted_at AS "attemptedAt" FROM webhook_deliveries WHERE id = ${deliveryId}::uuid AND endpoint_id = ${endpointId}::uuid
    UNION ALL
    SELECT event_id, event_type, job_id, event_at, attempted_at FROM (${batchAttempts(sql`SELECT * FROM webhook_delivery_batches WHERE id = overlay(${deliveryId}::uuid::text placing '0000' from 33)::uuid AND endpoint_id = ${endpointId}::uuid`, undefined)}) a
    WHERE a.id = ${deliveryId}::uuid`)
  return row
}

const LaterRow = Type.Object({ delivered: OrNull(Type.Boolean()), attempt: OrNull(Type.Integer()) })

/** Whether an attempt of the event after `after` delivered it, and the event's last attempt (both null: none is a row). */
export async function laterAttempts (reader: SqlReader, endpointId: string, eventId: string, after: Date): Promise<Static<typeof LaterRow>> {
  const [later] = await reader.rows(LaterRow, sql`
    SELECT bool_or(outcome = 'delivered' AND attempted_at > ${after}) AS delivered, max(attempt)::int AS attempt
    FROM webhook_deliveries WHERE endpoint_id = ${endpointId}::uuid AND event_id = ${eventId}`)
  return later ?? { delivered: null, attempt: null }
}

/** The endpoint's events whose last attempt since `since` failed and will not be tried again. */
export const givenUp = (endpointId: string, since: Date): Sql => sql`
  SELECT * FROM (
    SELECT DISTINCT ON (event_id) event_id, event_type, job_id, event_at, attempt, outcome, next_attempt_at
    FROM webhook_deliveries WHERE endpoint_id = ${endpointId}::uuid AND attempted_at >= ${since} AND NOT (event_type = ANY (${[...NOTICE_EVENT_TYPES]}::text[]))
    ORDER BY event_id, attempted_at DESC, attempt DESC
  ) latest WHERE outcome = 'failed' AND next_attempt_at IS NULL`

const GivenUpRow = Type.Object({ eventId: Type.String(), eventType: Type.String(), jobId: OrNull(Type.String()), eventAt: Type.Date(), attempt: Type.Integer() })
export type GivenUp = Static<typeof GivenUpRow>

/** Of `given` (givenUp), the events not among `scheduled`, in event id order, `limit` at most. */
export async function givenUpEvents (reader: SqlReader, given: Sql, scheduled: string[], limit: number): Promise<GivenUp[]> {
  return await reader.rows(GivenUpRow, sql`
    SELECT event_id AS "eventId", event_type AS "eventType", job_id AS "jobId", event_at AS "eventAt", attempt
    FROM (${given}) g WHERE NOT (event_id = ANY (${scheduled}::text[])) ORDER BY event_id LIMIT ${limit}`)
}

const CountRow = Type.Object({ n: Type.Integer() })

/** How many of `given` (givenUp) are among `scheduled`. */
export async function givenUpScheduled (reader: SqlReader, given: Sql, scheduled: string[]): Promise<number> {
  if (scheduled.length === 0) return 0
  return (await reader.rows(CountRow, sql`SELECT count(*)::int AS n FROM (${given}) g WHERE event_id = ANY (${scheduled}::text[])`))[0]!.n
}
