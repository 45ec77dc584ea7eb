import type { FastifyBaseLogger } from 'fastify'
import type { PgBoss } from 'pg-boss'
import { openQueue, type QueueTarget } from '../db/queue.js'
import type { Deliverer } from './deliverer.js'
import { DEAD_DELIVERY_QUEUE, DELIVERY_QUEUE, ensureDeliveryQueue, type DeliveryJob } from './delivery-queue.js'
import type { WebhookSettings } from './webhook-settings.js'

// The job queue of an instance (pg-boss: retries, redeliveries, recoveries) and, where it
// delivers, its workers: one job (an endpoint's batch of events) per worker, one job per
// endpoint at a time over every instance (docs/webhooks-design.md, "Delivery").

const unref = <T extends { unref: () => unknown }>(timer: T): T => { timer.unref(); return timer }
const UNREF_CLOCK = {
  now: () => Date.now(),
  setTimeout: (fn: () => void, ms: number) => unref(setTimeout(fn, ms)),
  clearTimeout: (handle: unknown) => { clearTimeout(handle as NodeJS.Timeout) },
  setInterval: (fn: () => void, ms: number) => unref(setInterval(fn, ms)),
  clearInterval: (handle: unknown) => { clearInterval(handle as NodeJS.Timeout) },
}

/** The queue, started, its delivery queues made or brought to these settings; supervised where `worker`. */
export async function openDeliveryQueue (target: QueueTarget, settings: WebhookSettings, worker: boolean, log: FastifyBaseLogger): Promise<PgBoss> {
  const boss = openQueue(target, {
    // Its timers and idle connections keep no process alive (the app's close stops them).
    clock: UNREF_CLOCK,
    // Maintenance (expiry, heartbeats, deletion) where workers run, every 10 s: a dead
    // worker's job is found within heartbeatSeconds (10) + 10 s, and made again by the next
    // poll (10 s).
    supervise: worker,
    schedule: false,
    superviseIntervalSeconds: 10,
    monitorIntervalSeconds: 10,
    useListenNotify: worker,
    reindex: false,
  })
  boss.on('error', error => { log.warn({ err: error }, 'webhooks: the job queue reported an error') })
  boss.on('warning', warning => { log.warn({ warning }, 'webhooks: the job queue warns') })
  await boss.start()
  try {
    await ensureDeliveryQueue(boss, settings)
  } catch (error) {
    await boss.stop({ graceful: false }).catch(() => {})
    throw error
  }
  return boss
}

/**
 * `count` workers of the delivery queue, and the dead letters' one, delivering with the
 * deliverer `make` returns; `make` is given how to wake them when a retry falls due.
 */
export async function startDeliveryWorkers (boss: PgBoss, count: number, make: (wake: (at: Date) => void) => Deliverer): Promise<Deliverer> {
  const workers: string[] = []
  // A retry's job is not announced when it falls due (pg-boss notifies new jobs only): the
  // instance that scheduled it wakes its workers then, rather than at their next poll.
  const deliverer = make(at => {
    setTimeout(() => { for (const id of workers) boss.notifyWorker(id) }, Math.max(0, at.getTime() - Date.now()) + 10).unref()
  })
  for (let i = 0; i < count; i++) {
    // A worker that delivered a job asks for the next one at once rather than at its next
    // poll (pg-boss wakes workers when a job is made, not when one is done): a backlog is
    // worked off as fast as the workers go.
    const self = { id: '' }
    self.id = await boss.work<DeliveryJob>(DELIVERY_QUEUE, { batchSize: 1, groupConcurrency: 1, pollingIntervalSeconds: 2, notifyPollingIntervalSeconds: 10 },
      async ([job]) => {
        await deliverer.deliver(job!.data)
        setImmediate(() => { boss.notifyWorker(self.id) })
      })
    workers.push(self.id)
  }
  // A job pg-boss gave up on: its events recorded as failed, for `recover`.
  await boss.work<DeliveryJob>(DEAD_DELIVERY_QUEUE, { batchSize: 1, pollingIntervalSeconds: 30 }, async ([job]) => { await deliverer.giveUp(job!.data) })
  return deliverer
}
