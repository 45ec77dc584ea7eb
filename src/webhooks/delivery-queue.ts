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
}

/** pg-boss's executeSql: a job enqueued through the caller's transaction commits with it. */
export interface QueueDb { executeSql: (text: string, values: unknown[]) => Promise<{ rows: unknown[] }> }

/**
 * The queue's settings. An attempt whose worker stops beating (a killed instance) is failed
 * after 10 s, noticed by the next monitor run (every 10 s: src/webhooks/service.ts), and made
 * again by another worker with the same events; a job that fails that way 20 times in a row
 * is left failed. Completed jobs are kept an hour (the delivery record is ours).
 */
export const DELIVERY_QUEUE_OPTIONS = {
  notify: true,
  heartbeatSeconds: 10,
  retryLimit: 20,
  retryDelay: 1,
  expireInSeconds: 900,
  deleteAfterSeconds: 3600,
  retentionSeconds: 14 * 86_400,
}

/** Creates the queue, or brings its settings to these (idempotent; every instance at start). */
export async function ensureDeliveryQueue (boss: PgBoss): Promise<void> {
  if (await boss.getQueue(DELIVERY_QUEUE) === null) await boss.createQueue(DELIVERY_QUEUE, DELIVERY_QUEUE_OPTIONS)
  else await boss.updateQueue(DELIVERY_QUEUE, DELIVERY_QUEUE_OPTIONS)
}

/** Enqueues `events` of one endpoint, through `db` (a transaction) when given, from `startAfter` when given. */
export async function enqueueEvents (boss: PgBoss, endpointId: string, events: WebhookEvent[], options: { db?: QueueDb, startAfter?: Date } = {}): Promise<void> {
  if (events.length === 0) return
  const jobs = []
  for (let i = 0; i < events.length; i += EVENTS_PER_JOB) {
    const data: DeliveryJob = { endpointId, events: events.slice(i, i + EVENTS_PER_JOB) }
    jobs.push({ data, group: { id: endpointId }, ...(options.startAfter !== undefined ? { startAfter: options.startAfter } : {}) })
  }
  await boss.insert(DELIVERY_QUEUE, jobs, options.db !== undefined ? { db: options.db } : {})
}
