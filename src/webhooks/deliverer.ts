import type { PgBoss } from 'pg-boss'
import type { SqlReader, SqlWriter } from '../db/sql-reader.js'
import { ApiError } from '../errors.js'
import { empty, sql, type Sql } from '../db/sql.js'
import { deliveryEndpoint, signingSecrets, type DeliveryEndpoint } from './delivery-endpoint.js'
import { enqueueEvents, type DeliveryJob } from './delivery-queue.js'
import type { Batch } from './batch.js'
import type { EgressGuard } from './egress.js'
import { RECORD, type Attempt } from './delivery-record.js'
import { recordAttempts, type DeliveryOutcomes, type Sent } from './record-attempts.js'
import type { WebhookEvent } from './events.js'
import type { SecretBox } from './secrets.js'
import { storedPosition, type EndpointPosition } from './position.js'
import { signingKeys } from './signing.js'
import { postAttempt } from './post-attempt.js'

// Events POSTed to an endpoint (at most `endpointConcurrency` at once), signed with its
// secret (and the previous one during a rotation's grace), then every attempt recorded, the
// failed ones scheduled again in the job queue, and the endpoint's state moved on: a
// dispatcher's batch (first attempts, sent from the process that read them), then its
// position moved; or a queued job (retries, redeliveries), which pg-boss completes only once
// all that is done and makes again if its worker died. Each step is one statement on the
// primary through the driver adapter (docs/webhooks-design.md, "Cost").

/**
 * A batch's events not started within this (an endpoint slower than the changes) are handed
 * to the queue, so that its lease, and a dead instance's wait, stay short.
 */
export const BATCH_START_MS = 5000

/** How often a delivery asks whether the replicas have replayed its changes. */
const REPLAY_POLL_MS = 25

export interface DeliverySettings {
  timeoutMs: number
  replicaWaitMs: number
  /** The wait before each retry; an event failed after the last is given up. */
  retryDelaysMs: number[]
  /** An endpoint failing for this long is disabled. */
  disableAfterMs: number
  endpointConcurrency: number
}

async function mapLimited<T, R> (items: T[], limit: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) { const i = next++; results[i] = await f(items[i]!) }
  }))
  return results
}

export class Deliverer {
  constructor (private readonly deps: {
    primary: SqlReader & SqlWriter
    /** Whether the replicas taking reads have replayed up to a WAL position (Database.replayed). */
    replayed: (lsn: string) => Promise<boolean>
    boss: PgBoss
    guard: EgressGuard
    secrets: () => Promise<SecretBox>
    settings: DeliverySettings
    outcomes: DeliveryOutcomes
    /** Called with the time a retry falls due, once it is scheduled. */
    wake: (at: Date) => void
  }) {}

  /** Delivers one queued job's events (see above). */
  async deliver (job: DeliveryJob): Promise<void> {
    const endpoint = await deliveryEndpoint(this.deps.primary, job.endpointId)
    if (endpoint === undefined) return // deleted, with its record
    if (endpoint.status !== 'enabled' || !endpoint.makerMayRead) {
      // Recorded, not sent: `recover` resends them once it is enabled again (by a key that may
      // read: the dispatcher disables one whose maker may not, at its next run).
      const error = endpoint.status !== 'enabled' ? 'endpoint disabled' : 'not sent: the key that made the endpoint may no longer read the organization'
      const failed: Attempt[] = job.events.map(event => ({ event, outcome: 'failed', statusCode: null, error, durationMs: null, nextAttemptAt: null }))
      await this.deps.primary.execute(RECORD(job.endpointId, new Date(), failed))
      job.events.forEach(() => { this.deps.outcomes.attempt('endpoint_disabled') })
      return
    }
    const { sent } = await this.send(job.endpointId, endpoint, job.events, job.lsn, Infinity)
    await this.record(job.endpointId, endpoint.failingSince, sent, job.lsn)
  }

  /**
   * Sends a dispatcher's batch, then moves the endpoint's position past it (while the lease
   * is still the batch's). Events not started within BATCH_START_MS (a slow endpoint) go to
   * the queue as first attempts. Each step before the position's is one statement: should
   * one fail, or the process die, the position stays and the lease runs out, and a later run
   * sends the same changes again with the same webhook-ids (docs/webhooks-design.md).
   */
  async sendBatch (batch: Batch): Promise<void> {
    const { primary, boss, settings } = this.deps
    // Only while the lease is still this batch's: a run that took the endpoint after it ran out owns it now.
    // A delivery ends a failing spell that began after the batch read the endpoint (a retry
    // failing meanwhile), at no statement of its own.
    const endLease = (moveTo?: EndpointPosition, delivered = false): Sql => sql`UPDATE webhook_endpoints
      SET sending_until = NULL${moveTo === undefined ? empty : sql`, position = ${JSON.stringify(storedPosition(moveTo))}::jsonb`}${delivered ? sql`, failing_since = NULL, consecutive_failures = 0, failing_notified_at = NULL` : empty}
      WHERE id = ${batch.endpointId}::uuid AND sending_until = ${batch.lease.toISOString()}::timestamptz`
    try {
      const { sent, unsent } = await this.send(batch.endpointId, batch.endpoint, batch.events, batch.lsn, Date.now() + Math.min(BATCH_START_MS, settings.timeoutMs))
      const delivered = await this.record(batch.endpointId, batch.endpoint.failingSince, sent, batch.lsn)
      await enqueueEvents(boss, batch.endpointId, unsent, batch.lsn !== undefined ? { lsn: batch.lsn } : {})
      await primary.execute(endLease(batch.next, delivered))
    } catch (error) {
      // The next run reads these changes again at once rather than when the lease runs out.
      await primary.execute(endLease()).catch(() => {})
      throw error
    }
  }

  /**
   * Signs and POSTs `events`, those started before `startBy`; the rest are returned unsent.
   * With no secret to sign with, none is sent: each is a failed attempt.
   */
  private async send (endpointId: string, endpoint: DeliveryEndpoint, events: WebhookEvent[], lsn: string | undefined, startBy: number): Promise<{ sent: Sent[], unsent: WebhookEvent[] }> {
    const { settings, guard } = this.deps
    const now = new Date()
    let secrets: string[]
    try {
      secrets = signingSecrets(await this.deps.secrets(), endpointId, endpoint, now)
    } catch (failure) {
      // No WEBHOOK_SECRET_KEY, or the secret was stored under another: failed attempts,
      // retried and recorded like any other (the operator may set the key), never sent unsigned.
      const error = failure instanceof ApiError
        ? 'WEBHOOK_SECRET_KEY is not set on the instance that attempted it'
        : 'its signing secret does not open with this WEBHOOK_SECRET_KEY (stored under another key)'
      return { sent: events.map(event => ({ event, result: { error, durationMs: 0 } })), unsent: [] }
    }
    const keys = signingKeys(secrets)
    if (lsn !== undefined) await this.replicasCaughtUp(lsn)
    const results = await mapLimited(events, settings.endpointConcurrency, async event => {
      if (Date.now() > startBy) return undefined
      return await postAttempt(guard, endpointId, endpoint.url, event, keys, settings.timeoutMs)
    })
    const sent: Sent[] = []
    const unsent: WebhookEvent[] = []
    results.forEach((result, i) => { if (result === undefined) unsent.push(events[i]!); else sent.push(result) })
    return { sent, unsent }
  }

  /**
   * Until the replicas taking reads have replayed `lsn`, or `replicaWaitMs` passed (a replica
   * still behind then is lagging, and its reads go elsewhere).
   */
  private async replicasCaughtUp (lsn: string): Promise<void> {
    const deadline = Date.now() + this.deps.settings.replicaWaitMs
    while (!await this.deps.replayed(lsn) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, REPLAY_POLL_MS))
  }

  /**
   * A job the queue gave up on (it failed every run: docs/webhooks-design.md, "Delivery"): its
   * events recorded as failed, with no retry, so that `recover` resends them.
   */
  async giveUp (job: DeliveryJob): Promise<void> {
    const failed: Attempt[] = job.events.map(event => ({ event, outcome: 'failed', statusCode: null, error: 'not attempted to the end: its delivery job failed every run (see the log)', durationMs: null, nextAttemptAt: null }))
    await this.deps.primary.execute(RECORD(job.endpointId, new Date(), failed))
    job.events.forEach(() => { this.deps.outcomes.attempt('failed') })
  }

  private async record (endpointId: string, wasFailingSince: Date | null, sent: Sent[], lsn?: string): Promise<boolean> {
    return await recordAttempts(this.deps, endpointId, wasFailingSince, sent, lsn)
  }
}
