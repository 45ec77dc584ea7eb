import { sql, type Sql } from '../db/sql.js'
import { jobOf, type WebhookEvent } from './events.js'

// The record of delivery attempts (GET …/deliveries reads it: deliveries.ts): the statements
// that write it, one per batch of attempts, whoever made them (deliverer.ts, test-event.ts).

/** One attempt, as recorded. */
export interface Attempt { event: WebhookEvent, outcome: 'delivered' | 'failed', statusCode: number | null, error: string | null, durationMs: number | null, nextAttemptAt: Date | null, /** The attempt's span's trace, while tracing is on. */ traceId?: string }

/** Every attempt of a job, in one statement (its rows as JSON: one parameter on either adapter); none once the endpoint is deleted. */
export const RECORD = (endpointId: string, at: Date, attempts: Attempt[]): Sql => sql`
  INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, job_id, event_at, attempt, outcome, status_code, error, duration_ms, attempted_at, next_attempt_at, trace_id)
  SELECT ${endpointId}::uuid, r.event_id, r.event_type, r.job_id, r.event_at, r.attempt, r.outcome, r.status_code, r.error, r.duration_ms, ${at.toISOString()}::timestamptz, r.next_attempt_at, r.trace_id
  FROM jsonb_to_recordset(${JSON.stringify(attempts.map(a => ({
    event_id: a.event.id,
    event_type: a.event.type,
    job_id: jobOf(a.event),
    event_at: a.event.at,
    attempt: a.event.attempt,
    outcome: a.outcome,
    status_code: a.statusCode,
    error: a.error,
    duration_ms: a.durationMs,
    next_attempt_at: a.nextAttemptAt?.toISOString() ?? null,
    trace_id: a.traceId ?? null,
  })))}::jsonb)
  AS r(event_id text, event_type text, job_id uuid, event_at timestamptz, attempt int, outcome text, status_code int, error text, duration_ms int, next_attempt_at timestamptz, trace_id text)
  WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ${endpointId}::uuid)`

/** A PostgreSQL array literal of `values` (ids, types, uuids, numbers: nothing to quote), NULL for null. */
const arrayLiteral = (values: Array<string | number | null>): string => `{${values.map(v => v === null ? 'NULL' : String(v)).join(',')}}`

/**
 * First attempts delivered, of events seen at one time and in one trace (attempts[0]'s), in
 * one row of webhook_delivery_batches (its id's last 16 bits 0: attempt i's id has i there);
 * none once the endpoint is deleted.
 */
export const RECORD_DELIVERED = (endpointId: string, at: Date, attempts: Attempt[]): Sql => sql`
  INSERT INTO webhook_delivery_batches (id, endpoint_id, event_at, attempted_at, event_ids, event_types, job_ids, status_codes, durations_ms, trace_id)
  SELECT overlay(gen_random_uuid()::text placing '0000' from 33)::uuid, ${endpointId}::uuid, ${attempts[0]!.event.at}::timestamptz, ${at.toISOString()}::timestamptz,
         ${arrayLiteral(attempts.map(a => a.event.id))}::text[], ${arrayLiteral(attempts.map(a => a.event.type))}::text[],
         ${arrayLiteral(attempts.map(a => jobOf(a.event)))}::uuid[],
         ${arrayLiteral(attempts.map(a => a.statusCode))}::int[], ${arrayLiteral(attempts.map(a => a.durationMs))}::int[], ${attempts[0]!.traceId ?? null}::text
  WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ${endpointId}::uuid)`
