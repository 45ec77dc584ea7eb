import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Counter } from 'prom-client'
import { serializationFailure } from '../db/errors.js'
import { runPeriodically } from '../plugins/periodic.js'
import { pruneDeliveries } from './deliveries.js'
import { dispatchChanges, type DispatchResult } from './dispatch.js'
import { pastSpan } from '../telemetry/tracing.js'
import { pruneIdempotencyKeys } from './idempotency.js'
import { sendNotices } from './notices.js'
import { webhookMetrics } from './webhook-metrics.js'
import type { Webhooks } from './webhooks.js'

// The webhooks' moving parts on an instance: the queue opened when the app is ready (and
// again later if the database was away), and where WEBHOOK_WORKER=on the dispatcher (every
// WEBHOOK_DISPATCH_INTERVAL_MS; one instance at a time runs it), the delivery workers and the
// hourly pruning of the delivery record; their metrics; all stopped when the app closes.

const PRUNE_INTERVAL_MS = 3_600_000
const RETRY_START_MS = 5000

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
  webhooks.reportTo(webhookMetrics(app, webhooks))
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
    if (await app.database.prisma.webhookEndpoint.count({ where: { status: 'enabled' } }) === 0) return
    await webhooks.start()
    started = true
  }
  if (webhooks.delivers) {
    app.addHook('onReady', async () => {
      // Only this process opens an embedded database: a lease left by one that died is void.
      if (app.database.kind === 'embedded') await app.database.prisma.$executeRaw`UPDATE webhook_endpoints SET sending_until = NULL WHERE sending_until IS NOT NULL`
      await startWhenUsed().catch((error: unknown) => { app.log.warn({ err: error }, `webhooks: the job queue could not be opened; trying again every ${RETRY_START_MS / 1000} s`) })
    })
    runPeriodically(app, 'opening the webhooks\' job queue', RETRY_START_MS, startWhenUsed)
    runPeriodically(app, 'dispatching changes to webhook endpoints', webhooks.settings.dispatchIntervalMs, async () => {
      if (!started) return
      const boss = await webhooks.queue()
      // An endpoint changed by a partner during the run (its position's row): nothing was
      // leased, and the next run reads the same changes. Not a failure to log.
      const runStart = Date.now()
      const dispatched = await dispatchChanges(app.database.prisma, { leaseMs: webhooks.leaseMs, replicated: app.database.replicas().length > 0, budget: webhooks.room(), log: app.log }).catch((error: unknown) => { if (!serializationFailure(error)) throw error })
      if (dispatched !== undefined) traceRun(dispatched, runStart)
      for (const batch of dispatched?.batches ?? []) webhooks.send(batch)
      for (const { endpointId, reason } of dispatched?.stopped ?? []) {
        app.log.warn({ endpoint: endpointId, reason }, `webhook endpoint ${endpointId} disabled: ${reason === 'key_revoked' ? 'the key that made it is revoked, expired or deleted' : 'the user of the key that made it left the organization'}`)
      }
      for (const notice of await sendNotices(app.database.prisma, boss, webhooks.settings.failingAfter)) {
        const fields = { endpoint: notice.endpointId, organization_id: notice.organizationId, type: notice.type, reason: notice.reason, recipients: notice.recipients }
        // With no other endpoint to tell, the operator is the one who can tell the partner.
        if (notice.recipients === 0) { app.log.warn(fields, `webhooks: ${notice.type} about endpoint ${notice.endpointId}: its organization has no other enabled endpoint to tell`); continue }
        notices?.inc({ type: notice.type })
        app.log.info(fields, `webhooks: ${notice.type} about endpoint ${notice.endpointId} queued for ${notice.recipients} other endpoint(s) of its organization`)
      }
    })
    runPeriodically(app, 'pruning the webhook delivery record and idempotency keys', PRUNE_INTERVAL_MS, async () => {
      await pruneDeliveries(app.database.prisma, webhooks.settings.retentionDays)
      await pruneIdempotencyKeys(app.database.prisma)
    })
  }
  webhooks.onStart(() => { started = true })
  app.addHook('onClose', async () => { await webhooks.stop(5000) })
}, { name: 'webhooks', dependencies: ['database', 'draining'] })
