import type { PgBoss } from 'pg-boss'
import type { WebhookEvent } from './events.js'

// The delivery jobs on the shared queue (pg-boss, src/db/queue.ts): each carries up to
// EVENTS_PER_JOB events of one endpoint, and belongs to the endpoint's group, which pg-boss
// runs one job at a time across every instance (groupConcurrency): an endpoint's deliveries
// take one worker at most, whatever it does (docs/webhooks-design.md, "Delivery").

export const DELIVERY_QUEUE = 'webhook-delivery'
export const EVENTS_PER_JOB = 50

export interface DeliveryJob {
  endpointId: string
  events: WebhookEvent[]
  /**
   * With read replicas: the primary's WAL position once the events' changes had committed.
   * A delivery waits until the replicas taking reads have replayed it, so that the partner,
   * reading the job when told, reads the change wherever its read goes.
   */
  lsn?: string
}

/** pg-boss's executeSql: a job enqueued through the caller's transaction commits with it. */
export interface QueueDb { executeSql: (text: string, values: unknown[]) => Promise<{ rows: unknown[] }> }

/** pg-boss's view of a Prisma transaction: the jobs are queued when it commits, not before. */
export const queueDb = (tx: { $queryRawUnsafe: <T>(query: string, ...values: unknown[]) => Promise<T> }): QueueDb =>
  ({ executeSql: async (text, values) => ({ rows: await tx.$queryRawUnsafe<unknown[]>(text, ...values) }) })

/** Where a job pg-boss gave up on goes: its events are recorded as failed there (webhooks.ts), so that `recover` finds them. */
export const DEAD_DELIVERY_QUEUE = 'webhook-delivery-dead'

/**
 * The queue's settings. An attempt whose worker stops beating (a killed instance) is failed
 * after 10 s, noticed by the next monitor run (every 10 s: src/webhooks/webhooks.ts), and made
 * again by another worker with the same events; so is a job whose handler threw (the
 * database away, a deadlock). Again at once, then backing off to 10 minutes apart: about 3
 * hours in all (30 runs), after which the job goes to the dead-letter queue. A job may run
 * as long as its events take against an endpoint that never answers (each within the
 * timeout, `endpointConcurrency` at a time), plus a minute, before pg-boss counts it dead.
 * Completed jobs are kept an hour (the delivery record is ours).
 */
export function deliveryQueueOptions (settings: { timeoutMs: number, endpointConcurrency: number }) {
  return {
    notify: true,
    heartbeatSeconds: 10,
    retryLimit: 30,
    retryDelay: 1,
    retryBackoff: true,
    retryDelayMax: 600,
    expireInSeconds: Math.ceil(EVENTS_PER_JOB / settings.endpointConcurrency) * Math.ceil(settings.timeoutMs / 1000) + 60,
    deleteAfterSeconds: 3600,
    retentionSeconds: 14 * 86_400,
    deadLetter: DEAD_DELIVERY_QUEUE,
  }
}

/** The dead letters: recorded once, retried (backing off) until they are. */
const DEAD_QUEUE_OPTIONS = { notify: true, retryLimit: 1000, retryDelay: 5, retryBackoff: true, retryDelayMax: 600, deleteAfterSeconds: 86_400, retentionSeconds: 14 * 86_400 }

/** Creates the queues, or brings their settings to these (idempotent; every instance at start). */
export async function ensureDeliveryQueue (boss: PgBoss, settings: { timeoutMs: number, endpointConcurrency: number }): Promise<void> {
  for (const [name, options] of [[DEAD_DELIVERY_QUEUE, DEAD_QUEUE_OPTIONS], [DELIVERY_QUEUE, deliveryQueueOptions(settings)]] as const) {
    if (await boss.getQueue(name) === null) await boss.createQueue(name, options)
    else await boss.updateQueue(name, options)
  }
}

/** The delivery jobs of `events` of one endpoint: from `startAfter` when given, to be sent once replicas have replayed `lsn` when given. */
export function deliveryJobs (endpointId: string, events: WebhookEvent[], options: { startAfter?: Date, lsn?: string } = {}) {
  const jobs = []
  for (let i = 0; i < events.length; i += EVENTS_PER_JOB) {
    const data: DeliveryJob = { endpointId, events: events.slice(i, i + EVENTS_PER_JOB), ...(options.lsn !== undefined ? { lsn: options.lsn } : {}) }
    jobs.push({ data, group: { id: endpointId }, ...(options.startAfter !== undefined ? { startAfter: options.startAfter } : {}) })
  }
  return jobs
}

/** Queues jobs in one statement, through `db` (a transaction) when given. */
export async function insertDeliveryJobs (boss: PgBoss, jobs: ReturnType<typeof deliveryJobs>, db?: QueueDb): Promise<void> {
  if (jobs.length > 0) await boss.insert(DELIVERY_QUEUE, jobs, db !== undefined ? { db } : {})
}

/** Enqueues `events` of one endpoint (deliveryJobs), through `db` (a transaction) when given. */
export async function enqueueEvents (boss: PgBoss, endpointId: string, events: WebhookEvent[], options: { db?: QueueDb, startAfter?: Date, lsn?: string } = {}): Promise<void> {
  await insertDeliveryJobs(boss, deliveryJobs(endpointId, events, options), options.db)
}
