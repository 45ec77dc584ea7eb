import type { PgBoss } from 'pg-boss'
import type { SqlWriter } from '../db/sql-reader.js'
import { sql } from '../db/sql.js'
import { delivered, errorOf, type AttemptResult } from './attempt-result.js'
import { RECORD, RECORD_DELIVERED, type Attempt } from './delivery-record.js'
import { enqueueEvents } from './delivery-queue.js'
import type { WebhookEvent } from './events.js'

// After the POSTs of a batch or a job (deliverer.ts): every attempt recorded, the failed ones
// queued again for their retries, and the endpoint's state moved on (failing since when;
// disabled after a 410 or WEBHOOK_DISABLE_AFTER of failures).

export interface DeliveryOutcomes {
  /** One call per attempt recorded. */
  attempt: (outcome: 'delivered' | 'failed' | 'endpoint_disabled') => void
  /** Attempts that failed alike (one status or error, one next attempt; null: none is made), for the log. */
  failed: (endpointId: string, failure: FailedAttempts) => void
  /** An endpoint disabled by a delivery: `gone` (it answered 410) or `failing`. */
  disabled: (endpointId: string, reason: 'gone' | 'failing', since: Date | null) => void
}

export interface FailedAttempts { status: number | null, error: string | null, nextAttemptAt: Date | null, eventIds: string[] }

/** An event sent, how it went, and the trace of its attempt's span (while tracing is on). */
export interface Sent { event: WebhookEvent, result: AttemptResult, traceId?: string }

export interface RecordDeps {
  primary: SqlWriter
  boss: PgBoss
  outcomes: DeliveryOutcomes
  /** The wait before each retry (an event failed after the last is given up); how long an endpoint may fail before it is disabled. */
  settings: { retryDelaysMs: number[], disableAfterMs: number }
  /** Called with the time a retry falls due, once it is scheduled. */
  wake: (at: Date) => void
}

/** Up to 20% more than `ms`, so that retries of many events spread out. */
const jittered = (ms: number): number => Math.round(ms * (1 + Math.random() * 0.2))

/** The failed attempts grouped by how they failed and when they are tried again: a line each, not one per event of a batch. */
function alike (attempts: Attempt[]): FailedAttempts[] {
  const groups = new Map<string, FailedAttempts>()
  for (const { outcome, statusCode, error, nextAttemptAt, event } of attempts) {
    if (outcome !== 'failed') continue
    const key = `${statusCode}|${error}|${nextAttemptAt?.getTime()}`
    const group = groups.get(key) ?? groups.set(key, { status: statusCode, error, nextAttemptAt, eventIds: [] }).get(key)!
    group.eventIds.push(event.id)
  }
  return [...groups.values()]
}

/**
 * Records `sent`, schedules their retries and moves the endpoint's state on, a statement at a
 * time; whether any was delivered (a batch then ends the endpoint's failing spell with its lease).
 */
export async function recordAttempts (deps: RecordDeps, endpointId: string, wasFailingSince: Date | null, sent: Sent[], lsn?: string): Promise<boolean> {
  const { primary, boss, outcomes, settings } = deps
  if (sent.length === 0) return false
  const now = new Date()
  const gone = sent.some(({ result }) => result.status === 410)
  const anyDelivered = sent.some(({ result }) => delivered(result))
  const failingSince = anyDelivered ? null : wasFailingSince ?? now
  const failing = !anyDelivered && !gone && failingSince !== null && now.getTime() - failingSince.getTime() >= settings.disableAfterMs
  // Retries, by attempt: one job each, at the attempt's delay or the longest Retry-After asked.
  const retries = new Map<number, { events: WebhookEvent[], at: number }>()
  const tried: Attempt[] = sent.map(({ event, result, traceId }) => {
    const ok = delivered(result)
    outcomes.attempt(ok ? 'delivered' : 'failed')
    const attempt: Attempt = { event, outcome: ok ? 'delivered' : 'failed', statusCode: result.status ?? null, error: errorOf(result), durationMs: result.durationMs, nextAttemptAt: null, ...(traceId !== undefined ? { traceId } : {}) }
    const delay = settings.retryDelaysMs[event.attempt - 1]
    if (ok || gone || failing || delay === undefined) return attempt
    const at = now.getTime() + Math.max(jittered(delay), result.retryAfterMs ?? 0)
    const retry = retries.get(event.attempt) ?? retries.set(event.attempt, { events: [], at: 0 }).get(event.attempt)!
    retry.events.push({ ...event, attempt: event.attempt + 1 })
    retry.at = Math.max(retry.at, at)
    return { ...attempt, nextAttemptAt: new Date(at) }
  })
  // Recorded at the time its retry's job starts (the latest of its events'), not its own.
  const attempts = tried.map(a => a.nextAttemptAt === null ? a : { ...a, nextAttemptAt: new Date(retries.get(a.event.attempt)!.at) })
  // Not one transaction: the job is completed (or the batch's position moved) only after
  // all of them, and made again whole if any fails (a duplicate attempt at worst, never a
  // lost one). The usual case, first attempts delivered, in one row.
  const compact: Attempt[] = []
  const rest: Attempt[] = []
  for (const a of attempts) (a.outcome === 'delivered' && a.event.attempt === 1 && a.event.at === attempts[0]!.event.at && a.traceId === attempts[0]!.traceId && a.statusCode !== null && a.durationMs !== null ? compact : rest).push(a)
  if (compact.length > 0) await primary.execute(RECORD_DELIVERED(endpointId, now, compact))
  if (rest.length > 0) await primary.execute(RECORD(endpointId, now, rest))
  for (const retry of retries.values()) await enqueueEvents(boss, endpointId, retry.events, { startAfter: new Date(retry.at), ...(lsn !== undefined ? { lsn } : {}) })
  // Failed attempts in a row, for the failing notice (notices.ts); updated_at says when the
  // partner changed the endpoint, not how deliveries go.
  const failures = attempts.filter(a => a.outcome === 'failed').length
  if (gone || failing) {
    await primary.execute(sql`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ${gone ? 'gone' : 'failing'}, failing_since = ${failingSince?.toISOString() ?? null}::timestamptz, consecutive_failures = consecutive_failures + ${failures}, updated_at = now() WHERE id = ${endpointId}::uuid`)
  } else if (anyDelivered) {
    if (wasFailingSince !== null) await primary.execute(sql`UPDATE webhook_endpoints SET failing_since = NULL, consecutive_failures = 0, failing_notified_at = NULL WHERE id = ${endpointId}::uuid`)
  } else if (failures > 0) {
    await primary.execute(sql`UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ${failingSince?.toISOString() ?? null}::timestamptz), consecutive_failures = consecutive_failures + ${failures} WHERE id = ${endpointId}::uuid`)
  }
  for (const retry of retries.values()) deps.wake(new Date(retry.at))
  for (const failure of alike(attempts)) outcomes.failed(endpointId, failure)
  if (gone || failing) outcomes.disabled(endpointId, gone ? 'gone' : 'failing', failingSince)
  return anyDelivered
}
