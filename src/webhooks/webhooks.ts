import type { FastifyBaseLogger } from 'fastify'
import type { PgBoss } from 'pg-boss'
import type { Database } from '../db/database.js'
import { ApiError, databaseUnavailable } from '../errors.js'
import { BATCH_START_MS, Deliverer } from './deliverer.js'
import type { DeliveryOutcomes } from './record-attempts.js'
import { openDeliveryQueue, startDeliveryWorkers } from './delivery-workers.js'
import type { Batch } from './batch.js'
import { EVENTS_PER_RUN, type Budget } from './dispatch.js'
import { EgressGuard, type Lookup } from './egress.js'
import { embeddedSecretKey, SecretBox } from './secrets.js'
import type { WebhookSettings } from './webhook-settings.js'

// What the webhooks feature holds for the app: the egress guard, the key of the secrets at
// rest, the job queue (pg-boss), and on an instance that delivers (WEBHOOK_WORKER=on) the
// delivery workers. The routes enqueue through it; src/webhooks/webhooks-plugin.ts starts and stops it.

/**
 * Batches an instance sends at once: each takes a pooled connection a moment per statement
 * (its record, its lease), and the dispatcher's run needs one too: thousands at once made it
 * wait past the pool's timeout (test/webhooks/fan-out.test.ts).
 */
const BATCHES_SENDING_MAX = 256

/** Webhooks cannot keep secrets on this instance: a server database and no WEBHOOK_SECRET_KEY. */
const notConfigured = (): ApiError => new ApiError(503, 'Webhooks are not configured on this instance: the operator must set WEBHOOK_SECRET_KEY.', {}, { 'retry-after': '60' })

export class Webhooks {
  readonly guard: EgressGuard
  private box: Promise<SecretBox> | undefined
  private boss: PgBoss | undefined
  private starting: Promise<PgBoss> | undefined
  private readonly started: Array<() => void> = []
  private outcomes: DeliveryOutcomes | undefined
  private deliverer: Deliverer | undefined
  /** The dispatcher's batches being sent by this instance, and their events. */
  private readonly sending = new Set<Promise<void>>()
  private sendingEvents = 0
  /** Per endpoint with a batch being sent here: when its changes were seen. */
  private readonly sendingSince = new Map<string, Date>()

  constructor (private readonly database: Database, readonly settings: WebhookSettings, private readonly log: FastifyBaseLogger, lookup?: Lookup) {
    this.guard = new EgressGuard(settings.allowedNetworks, lookup, log)
  }

  /**
   * Whether this instance dispatches and delivers: WEBHOOK_WORKER=on, and a key to open the
   * secrets with (on a server, WEBHOOK_SECRET_KEY). Without the key it would only move the
   * endpoints' positions past changes it cannot sign.
   */
  get delivers (): boolean {
    return this.settings.worker && (this.database.kind === 'embedded' || this.settings.secretKey !== undefined)
  }

  /** The box that seals and opens endpoints' secrets. */
  async secrets (): Promise<SecretBox> {
    this.box ??= (async () => {
      if (this.settings.secretKey !== undefined) return new SecretBox(Buffer.from(this.settings.secretKey, 'base64'))
      if (this.database.kind === 'embedded') return new SecretBox(await embeddedSecretKey(this.settings.dataDir))
      throw notConfigured()
    })().catch((error: unknown) => { this.box = undefined; throw error })
    return await this.box
  }

  /**
   * An endpoint was made or enabled through this instance: its queue (and workers, where it
   * delivers) start now rather than at the next check for endpoints. A queue out of reach
   * is not the request's failure: the next check starts it.
   */
  inUse (): void {
    this.queue().catch(() => {})
  }

  /** Calls `listener` once the queue has started, whoever started it. */
  onStart (listener: () => void): void { this.started.push(listener) }

  /** Where the delivery workers report what they did (metrics, logs); before the queue starts. */
  reportTo (outcomes: DeliveryOutcomes): void { this.outcomes = outcomes }

  /** The started queue (starting it, with its workers where this instance delivers); a 503 while it cannot be reached. */
  async queue (): Promise<PgBoss> {
    if (this.boss !== undefined) return this.boss
    try {
      return await this.start()
    } catch (error) {
      this.log.warn({ err: error }, 'webhooks: the job queue is not reachable')
      throw databaseUnavailable()
    }
  }

  /**
   * Opens the queue (and, on a delivering instance, its workers); once, however often it is
   * asked.
   */
  async start (): Promise<PgBoss> {
    this.starting ??= (async () => {
      const boss = await openDeliveryQueue(this.database.queue, this.settings, this.delivers, this.log)
      try {
        if (this.delivers) {
          // The embedded database serializes every query: fewer workers.
          const count = this.database.kind === 'embedded' ? Math.min(this.settings.concurrency, 4) : this.settings.concurrency
          this.deliverer = await startDeliveryWorkers(boss, count, wake => new Deliverer({ primary: this.database.primary, replayed: this.database.replayed, boss, guard: this.guard, secrets: async () => await this.secrets(), settings: this.settings, outcomes: this.outcomes ?? { attempt: () => {}, failed: () => {}, disabled: () => {} }, wake }))
        }
      } catch (error) {
        await boss.stop({ graceful: false }).catch(() => {})
        throw error
      }
      this.boss = boss
      for (const listener of this.started) listener()
      return boss
    })().catch((error: unknown) => { this.starting = undefined; throw error })
    return await this.starting
  }

  /**
   * How long a dispatcher's batch may take before its endpoint is read again: its last event
   * started within BATCH_START_MS, answered within the timeout, the replicas' wait where there
   * are replicas, and a margin. Shorter would send twice, never lose.
   */
  get leaseMs (): number {
    return BATCH_START_MS + this.settings.timeoutMs + (this.database.replicas().length > 0 ? this.settings.replicaWaitMs : 0) + 5000
  }

  /** Sends a dispatcher's batch, not waited for: a slow endpoint holds no other's. A failure is logged; its lease lets a later run send it again. */
  send (batch: Batch): void {
    const deliverer = this.deliverer
    if (deliverer === undefined) return
    this.sendingSince.set(batch.endpointId, new Date(batch.events[0]!.at))
    this.sendingEvents += batch.events.length
    const sending: Promise<void> = deliverer.sendBatch(batch)
      .catch((error: unknown) => { this.log.warn({ err: error, endpoint: batch.endpointId }, 'webhooks: a batch of events could not be sent or recorded; a later run sends it again') })
      .finally(() => { this.sending.delete(sending); this.sendingSince.delete(batch.endpointId); this.sendingEvents -= batch.events.length })
    this.sending.add(sending)
  }

  /**
   * What the next dispatcher run may hand this instance: the events and batches it has room
   * for, so that its memory and the pool's queue are bounded by what it sends at once, not
   * by how many endpoints are told each change.
   */
  room (): Budget {
    return { events: Math.max(0, EVENTS_PER_RUN - this.sendingEvents), batches: Math.max(0, BATCHES_SENDING_MAX - this.sending.size) }
  }

  /** The endpoints with a batch being sent by this instance, and when its changes were seen. */
  batchesSince (): ReadonlyMap<string, Date> { return this.sendingSince }

  /** Stops the workers and the batches under way (waiting up to `timeoutMs` for them; an unfinished one is sent again elsewhere) and the queue. */
  async stop (timeoutMs: number): Promise<void> {
    const starting = this.starting
    this.starting = undefined
    const boss = await starting?.catch(() => undefined)
    this.boss = undefined
    this.deliverer = undefined
    let timer: NodeJS.Timeout | undefined
    await Promise.race([Promise.allSettled([...this.sending]), new Promise(resolve => { timer = setTimeout(resolve, timeoutMs) })])
    clearTimeout(timer)
    await boss?.stop({ graceful: true, timeout: timeoutMs })
    this.guard.close()
  }
}
