import { Type } from '@sinclair/typebox'
import { OrNull } from '../db/row-schemas.js'
import type { SqlReader } from '../db/sql-reader.js'
import { sql } from '../db/sql.js'
import { DeliveryEndpointRow, type DeliveryEndpoint } from './delivery-endpoint.js'
import type { WebhookEvent } from './events.js'
import type { EndpointPosition } from './position.js'

// A dispatcher run's hand-over to the sender (src/webhooks/dispatch.ts to deliverer.ts): an
// endpoint's events, where its position goes once they are sent or queued, and its lease.

export interface Batch {
  endpointId: string
  endpoint: DeliveryEndpoint
  events: WebhookEvent[]
  next: EndpointPosition
  /** The lease this run took (sending_until): the position moves only while it is still this. */
  lease: Date
  /** With read replicas: the primary's WAL position past every change sent (delivery-queue.ts, DeliveryJob.lsn). */
  lsn?: string
}

// The delivery's endpoint (its status and maker are the run's to know), with its id and lease.
const { status: _status, makerMayRead: _maker, ...deliveryColumns } = DeliveryEndpointRow.properties
const BatchEndpointRow = Type.Object({ id: Type.String(), ...deliveryColumns, lease: OrNull(Type.Date()) })

/**
 * Leases `ids` for `leaseMs` (by the database's clock, the one the next run compares with)
 * and answers each endpoint as its batch needs it, secrets in base64 (sealed, as stored), with
 * the lease exactly as stored (its maker may read: the run just checked). Only the endpoints
 * leased: a run's memory is its batches'.
 */
export async function leaseEndpoints (reader: SqlReader, ids: string[], leaseMs: number): Promise<Map<string, DeliveryEndpoint & { lease: Date }>> {
  const rows = await reader.rows(BatchEndpointRow, sql`
    UPDATE webhook_endpoints SET sending_until = date_trunc('milliseconds', now()) + ${leaseMs}::int * interval '1 millisecond'
    WHERE id = ANY (${ids}::uuid[])
    RETURNING id::text AS id, url, encode(secret, 'base64') AS secret, encode(previous_secret, 'base64') AS "previousSecret",
              previous_secret_until AS "previousSecretUntil", failing_since AS "failingSince", sending_until AS lease`)
  return new Map(rows.map(r => [r.id, { url: r.url, status: 'enabled', secret: r.secret, previousSecret: r.previousSecret, previousSecretUntil: r.previousSecretUntil, failingSince: r.failingSince, makerMayRead: true, lease: r.lease! }]))
}
