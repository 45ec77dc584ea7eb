import { fromPrisma, type PgBoss } from 'pg-boss'
import type { Prisma } from '../db/database.js'
import { enqueueEvents, type DeliveryJob } from './delivery-queue.js'
import type { AttemptResult, EgressGuard } from './egress.js'
import { eventBody, type WebhookEvent } from './events.js'
import type { SecretBox } from './secrets.js'
import { signatureHeader } from './signing.js'

// One delivery job: its events POSTed to the endpoint (at most `endpointConcurrency` at once),
// signed with the endpoint's secret (and the previous one during a rotation's grace), then
// every attempt recorded, the failed ones scheduled again, and the endpoint's state moved on,
// in one transaction. At least once: a worker that dies after sending and before recording
// leaves the job to pg-boss, which has it made again (the same webhook-ids).

export interface DeliverySettings {
  timeoutMs: number
  /** The wait before each retry; an event failed after the last is given up. */
  retryDelaysMs: number[]
  /** An endpoint failing for this long is disabled. */
  disableAfterMs: number
  endpointConcurrency: number
}

export interface DeliveryOutcomes {
  /** One call per attempt recorded. */
  attempt: (outcome: 'delivered' | 'failed' | 'endpoint_disabled') => void
  /** An endpoint disabled by a delivery: `gone` (it answered 410) or `failing`. */
  disabled: (endpointId: string, reason: 'gone' | 'failing', since: Date | null) => void
}

interface Sent { event: WebhookEvent, result: AttemptResult }

const delivered = (result: AttemptResult): boolean => result.status !== undefined && result.status >= 200 && result.status < 300

/** Up to 20% more than `ms`, so that retries of many events spread out. */
const jittered = (ms: number): number => Math.round(ms * (1 + Math.random() * 0.2))

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
    prisma: Prisma
    boss: PgBoss
    guard: EgressGuard
    secrets: () => Promise<SecretBox>
    settings: DeliverySettings
    outcomes: DeliveryOutcomes
    /** Called with the time a retry falls due, once it is scheduled. */
    wake: (at: Date) => void
  }) {}

  private async send (url: string, secrets: string[], event: WebhookEvent): Promise<AttemptResult> {
    const body = eventBody(event)
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = { 'webhook-id': event.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(secrets, event.id, timestamp, body) }
    return await this.deps.guard.post(url, headers, body, this.deps.settings.timeoutMs)
  }

  /** Delivers one job's events (see above). */
  async deliver (job: DeliveryJob): Promise<void> {
    const { prisma, outcomes, settings } = this.deps
    const endpoint = await prisma.webhookEndpoint.findUnique({
      where: { id: job.endpointId },
      select: { id: true, url: true, status: true, secret: true, previousSecret: true, previousSecretUntil: true, failingSince: true },
    })
    if (endpoint === null) return // deleted, with its record
    const now = new Date()
    if (endpoint.status !== 'enabled') {
      // Recorded, not sent: `recover` resends them once it is enabled again.
      await prisma.webhookDelivery.createMany({ data: job.events.map(event => this.row(job.endpointId, event, { outcome: 'failed', error: 'endpoint disabled', attemptedAt: now })) })
      job.events.forEach(() => { outcomes.attempt('endpoint_disabled') })
      return
    }
    const box = await this.deps.secrets()
    const secrets = [box.open(endpoint.id, endpoint.secret)]
    if (endpoint.previousSecret !== null && endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil > now) secrets.push(box.open(endpoint.id, endpoint.previousSecret))
    const sent: Sent[] = (await mapLimited(job.events, settings.endpointConcurrency, async event => await this.send(endpoint.url, secrets, event)))
      .map((result, i) => ({ event: job.events[i]!, result }))
    await this.record(endpoint, sent)
  }

  private row (endpointId: string, event: WebhookEvent, fields: { outcome: 'delivered' | 'failed', statusCode?: number, error?: string, durationMs?: number, attemptedAt: Date, nextAttemptAt?: Date }) {
    return {
      endpointId,
      eventId: event.id,
      eventType: event.type,
      jobId: event.type === 'sync.reset' ? null : event.subject,
      eventAt: new Date(event.at),
      attempt: event.attempt,
      outcome: fields.outcome,
      statusCode: fields.statusCode ?? null,
      error: fields.error ?? null,
      durationMs: fields.durationMs ?? null,
      attemptedAt: fields.attemptedAt,
      nextAttemptAt: fields.nextAttemptAt ?? null,
    }
  }

  private async record (endpoint: { id: string, failingSince: Date | null }, sent: Sent[]): Promise<void> {
    const { prisma, boss, outcomes, settings } = this.deps
    const now = new Date()
    const gone = sent.some(({ result }) => result.status === 410)
    const anyDelivered = sent.some(({ result }) => delivered(result))
    const failingSince = anyDelivered ? null : endpoint.failingSince ?? now
    const failing = !anyDelivered && !gone && failingSince !== null && now.getTime() - failingSince.getTime() >= settings.disableAfterMs
    // Retries, by attempt: one job each, at the attempt's delay or the longest Retry-After asked.
    const retries = new Map<number, { events: WebhookEvent[], at: number }>()
    const rows = sent.map(({ event, result }) => {
      const ok = delivered(result)
      outcomes.attempt(ok ? 'delivered' : 'failed')
      const fields = {
        outcome: ok ? 'delivered' as const : 'failed' as const,
        ...(result.status !== undefined ? { statusCode: result.status } : {}),
        ...(result.error !== undefined ? { error: result.error } : result.status !== undefined && !ok ? { error: result.status >= 300 && result.status < 400 ? `redirect (${result.status}), not followed` : `status ${result.status}` } : {}),
        durationMs: result.durationMs,
        attemptedAt: now,
      }
      const delay = settings.retryDelaysMs[event.attempt - 1]
      if (ok || gone || failing || delay === undefined) return this.row(endpoint.id, event, fields)
      const at = now.getTime() + Math.max(jittered(delay), result.retryAfterMs ?? 0)
      const retry = retries.get(event.attempt) ?? retries.set(event.attempt, { events: [], at: 0 }).get(event.attempt)!
      retry.events.push({ ...event, attempt: event.attempt + 1 })
      retry.at = Math.max(retry.at, at)
      return this.row(endpoint.id, event, { ...fields, nextAttemptAt: new Date(at) })
    })
    await prisma.$transaction(async tx => {
      await tx.webhookDelivery.createMany({ data: rows })
      for (const retry of retries.values()) await enqueueEvents(boss, endpoint.id, retry.events, { db: fromPrisma(tx), startAfter: new Date(retry.at) })
      if (gone || failing) {
        await tx.webhookEndpoint.update({ where: { id: endpoint.id }, data: { status: 'disabled', disabledReason: gone ? 'gone' : 'failing', failingSince } })
      } else if ((failingSince === null) !== (endpoint.failingSince === null)) {
        // In SQL: updated_at says when the partner changed the endpoint, not how deliveries go.
        await tx.$executeRaw`UPDATE webhook_endpoints SET failing_since = ${failingSince} WHERE id = ${endpoint.id}::uuid`
      }
    })
    for (const retry of retries.values()) this.deps.wake(new Date(retry.at))
    if (gone || failing) outcomes.disabled(endpoint.id, gone ? 'gone' : 'failing', failingSince)
  }
}
