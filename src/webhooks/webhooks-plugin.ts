import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Counter, Gauge } from 'prom-client'
import { serializationFailure } from '../db/errors.js'
import { runPeriodically } from '../plugins/periodic.js'
import { pruneDeliveries } from './deliveries.js'
import type { DeliveryOutcomes } from './record-attempts.js'
import { DELIVERY_QUEUE } from './delivery-queue.js'
import { dispatchChanges, type DispatchResult } from './dispatch.js'
import { pastSpan } from '../telemetry/tracing.js'
import { pruneIdempotencyKeys } from './idempotency.js'
import { sendNotices } from './notices.js'
import type { Webhooks } from './webhooks.js'

// The webhooks' moving parts on an instance: the queue opened when the app is ready (and
// again later if the database was away), and where WEBHOOK_WORKER=on the dispatcher (every
// WEBHOOK_DISPATCH_INTERVAL_MS; one instance at a time runs it), the delivery workers and the
// hourly pruning of the delivery record; their metrics; all stopped when the app closes.

const PRUNE_INTERVAL_MS = 3_600_000
const RETRY_START_MS = 5000

function metrics (app: FastifyInstance, webhooks: Webhooks): DeliveryOutcomes {
  const register = app.metricsRegistry
  const attempts = register === undefined ? undefined : new Counter({ name: 'webhook_delivery_attempts_total', help: 'Webhook delivery attempts made by this instance, by outcome: delivered (2xx), failed (anything else), endpoint_disabled (recorded, not sent).', labelNames: ['outcome'] as const, registers: [register] })
  if (register !== undefined) {
    // eslint-disable-next-line no-new
    new Gauge({
      name: 'webhook_endpoints_disabled',
      help: 'Disabled webhook endpoints, by reason (requested, gone: it answered 410, failing: every delivery failed for WEBHOOK_DISABLE_AFTER, key_revoked, operator).',
      labelNames: ['reason'] as const,
      registers: [register],
      async collect () {
        this.reset()
        for (const row of await app.prisma.webhookEndpoint.groupBy({ by: ['disabledReason'], where: { status: 'disabled' }, _count: true })) {
          this.set({ reason: row.disabledReason ?? 'unknown' }, row._count)
        }
      },
    })
    // eslint-disable-next-line no-new
    new Gauge({
      name: 'webhook_oldest_undelivered_seconds',
      help: 'Per enabled endpoint with events waiting (being sent by this instance, queued, in flight or to be retried): the age of the oldest change among them.',
      labelNames: ['endpoint'] as const,
      registers: [register],
      async collect () {
        this.reset()
        const sending = webhooks.batchesSince()
        // Enabled endpoints only: a deleted or disabled one's queued events wait for nothing
        // (its jobs end when they run), and would keep the age climbing past the alert.
        const rows = await app.prisma.$queryRaw<Array<{ endpoint: string, seconds: number | null }>>`
          WITH queued AS (
            SELECT j.data->>'endpointId' AS endpoint, min((e->>'at')::timestamptz) AS since
            FROM pgboss.job j CROSS JOIN LATERAL jsonb_array_elements(j.data->'events') e
            WHERE j.name = ${DELIVERY_QUEUE} AND j.state IN ('created', 'retry', 'active')
            GROUP BY 1)
          SELECT w.id::text AS endpoint, extract(epoch FROM now() - q.since)::float8 AS seconds
          FROM webhook_endpoints w LEFT JOIN queued q ON q.endpoint = w.id::text
          WHERE w.status = 'enabled' AND (q.since IS NOT NULL OR w.id = ANY(${[...sending.keys()]}::uuid[]))`
        for (const { endpoint, seconds } of rows) {
          const since = sending.get(endpoint)
          this.set({ endpoint }, Math.max(seconds ?? 0, since !== undefined ? (Date.now() - since.getTime()) / 1000 : 0))
        }
      },
    })
  }
  return {
    attempt: outcome => { attempts?.inc({ outcome }) },
    failed: (endpointId, { status, error, nextAttemptAt, eventIds }) => {
      app.log.warn({ endpoint: endpointId, status, error, next_attempt_at: nextAttemptAt?.toISOString() ?? null, events: eventIds.length, event_ids: eventIds.slice(0, 10) },
        `webhook delivery to endpoint ${endpointId} failed (${error ?? `status ${status}`}) for ${eventIds.length} event(s): ${nextAttemptAt !== null ? `next attempt at ${nextAttemptAt.toISOString()}` : 'no further attempt'}`)
    },
    disabled: (endpointId, reason, since) => {
      app.log.warn({ endpoint: endpointId, reason, failing_since: since }, reason === 'gone'
        ? `webhook endpoint ${endpointId} answered 410 Gone: disabled`
        : `webhook endpoint ${endpointId} has only failed since ${since?.toISOString() ?? '?'} (WEBHOOK_DISABLE_AFTER ${webhooks.settings.disableAfterMs / 3_600_000} h): disabled`)
    },
  }
}

/**
 * While tracing is on, a span for a run that did something (an idle one, every second,
 * would be a trace each), which its events' attempts follow from (post-attempt.ts).
 */
function traceRun (run: DispatchResult, started: number): void {
  if (run.events === 0 && run.failed === 0 && run.stopped.length === 0) return
  const cause = pastSpan('webhooks: dispatch run', started, { 'screening.webhook.endpoints': run.endpoints, 'screening.webhook.events': run.events, 'screening.webhook.batches': run.batches.length, 'screening.webhook.resets': run.resets, 'screening.webhook.failed': run.failed })
  if (cause !== undefined) for (const batch of run.batches) for (const event of batch.events) event.cause = cause
}

export default fp(async function webhooksRuntime (app: FastifyInstance, { webhooks }: { webhooks: Webhooks }) {
  webhooks.reportTo(metrics(app, webhooks))
  const register = app.metricsRegistry
  const notices = register === undefined ? undefined : new Counter({ name: 'webhook_notices_total', help: 'Notices about an endpoint queued by this instance for its organization\'s other enabled endpoints, by type (webhook_endpoint.failing, webhook_endpoint.disabled); counted once whatever the number of recipients, not at all where there is none (a warn line instead).', labelNames: ['type'] as const, registers: [register] })
  if (app.database.kind === 'server' && webhooks.settings.secretKey === undefined) {
    app.log.warn('webhooks: WEBHOOK_SECRET_KEY is unset: webhook endpoints can be neither created nor delivered to on this instance (503), and it neither dispatches nor delivers, until it is set')
  }
  // The queue and its workers start once some endpoint is enabled (found at start and every
  // RETRY_START_MS after, or made through this instance): until then an instance pays nothing
  // for webhooks.
  let started = false
  const startWhenUsed = async (): Promise<void> => {
    if (started) return
    if (await app.prisma.webhookEndpoint.count({ where: { status: 'enabled' } }) === 0) return
    await webhooks.start()
    started = true
  }
  if (webhooks.delivers) {
    app.addHook('onReady', async () => {
      // Only this process opens an embedded database: a lease left by one that died is void.
      if (app.database.kind === 'embedded') await app.prisma.$executeRaw`UPDATE webhook_endpoints SET sending_until = NULL WHERE sending_until IS NOT NULL`
      await startWhenUsed().catch((error: unknown) => { app.log.warn({ err: error }, `webhooks: the job queue could not be opened; trying again every ${RETRY_START_MS / 1000} s`) })
    })
    runPeriodically(app, 'opening the webhooks\' job queue', RETRY_START_MS, startWhenUsed)
    runPeriodically(app, 'dispatching changes to webhook endpoints', webhooks.settings.dispatchIntervalMs, async () => {
      if (!started) return
      const boss = await webhooks.queue()
      // An endpoint changed by a partner during the run (its position's row): nothing was
      // leased, and the next run reads the same changes. Not a failure to log.
      const runStart = Date.now()
      const dispatched = await dispatchChanges(app.prisma, { leaseMs: webhooks.leaseMs, replicated: app.database.replicas().length > 0, budget: webhooks.room(), log: app.log }).catch((error: unknown) => { if (!serializationFailure(error)) throw error })
      if (dispatched !== undefined) traceRun(dispatched, runStart)
      for (const batch of dispatched?.batches ?? []) webhooks.send(batch)
      for (const { endpointId, reason } of dispatched?.stopped ?? []) {
        app.log.warn({ endpoint: endpointId, reason }, `webhook endpoint ${endpointId} disabled: ${reason === 'key_revoked' ? 'the key that made it is revoked, expired or deleted' : 'the user of the key that made it left the organization'}`)
      }
      for (const notice of await sendNotices(app.prisma, boss, webhooks.settings.failingAfter)) {
        const fields = { endpoint: notice.endpointId, organization_id: notice.organizationId, type: notice.type, reason: notice.reason, recipients: notice.recipients }
        // With no other endpoint to tell, the operator is the one who can tell the partner.
        if (notice.recipients === 0) { app.log.warn(fields, `webhooks: ${notice.type} about endpoint ${notice.endpointId}: its organization has no other enabled endpoint to tell`); continue }
        notices?.inc({ type: notice.type })
        app.log.info(fields, `webhooks: ${notice.type} about endpoint ${notice.endpointId} queued for ${notice.recipients} other endpoint(s) of its organization`)
      }
    })
    runPeriodically(app, 'pruning the webhook delivery record and idempotency keys', PRUNE_INTERVAL_MS, async () => {
      await pruneDeliveries(app.prisma, webhooks.settings.retentionDays)
      await pruneIdempotencyKeys(app.prisma)
    })
  }
  webhooks.onStart(() => { started = true })
  app.addHook('onClose', async () => { await webhooks.stop(5000) })
}, { name: 'webhooks', dependencies: ['prisma', 'draining'] })
