import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { Counter, Gauge } from 'prom-client'
import { OrNull } from '../db/row-schemas.js'
import { sql } from '../db/sql.js'
import { clientReader, type SqlReader } from '../db/sql-reader.js'
import { DELIVERY_QUEUE } from './delivery-queue.js'
import type { DeliveryOutcomes } from './record-attempts.js'
import type { Webhooks } from './webhooks.js'

// The webhooks' metrics and the log lines of their deliveries (docs/operations.md lists them).

const AgeRow = Type.Object({ endpoint: Type.String(), seconds: OrNull(Type.Number()) })

/**
 * Enabled endpoints with events queued, in flight or to be retried, and the age of the oldest
 * change among them (null: none queued, among `sending`). Enabled only: a deleted or disabled
 * one's queued events wait for nothing (its jobs end when they run), and would keep the age
 * climbing past the alert.
 */
export async function undeliveredAges (reader: SqlReader, sending: string[]): Promise<Array<Static<typeof AgeRow>>> {
  return await reader.rows(AgeRow, sql`
          WITH queued AS (
            SELECT j.data->>'endpointId' AS endpoint, min((e->>'at')::timestamptz) AS since
            FROM pgboss.job j CROSS JOIN LATERAL jsonb_array_elements(j.data->'events') e
            WHERE j.name = ${DELIVERY_QUEUE} AND j.state IN ('created', 'retry', 'active')
            GROUP BY 1)
          SELECT w.id::text AS endpoint, extract(epoch FROM now() - q.since)::float8 AS seconds
          FROM webhook_endpoints w LEFT JOIN queued q ON q.endpoint = w.id::text
          WHERE w.status = 'enabled' AND (q.since IS NOT NULL OR w.id = ANY(${sending}::uuid[]))`)
}

/** The webhooks' gauges and counter on the app's registry (none without one), and what a delivery reports to them and the log. */
export function webhookMetrics (app: FastifyInstance, webhooks: Pick<Webhooks, 'batchesSince' | 'settings'>): DeliveryOutcomes {
  const register = app.metricsRegistry
  const reader = clientReader(app.database.prisma)
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
        for (const row of await app.database.prisma.webhookEndpoint.groupBy({ by: ['disabledReason'], where: { status: 'disabled' }, _count: true })) {
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
        const rows = await undeliveredAges(reader, [...sending.keys()])
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
