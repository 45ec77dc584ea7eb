import { Type, type Static } from '@sinclair/typebox'
import { OrNull } from '../db/row-schemas.js'
import type { SqlReader } from '../db/rows.js'
import { Prisma as PrismaSql } from '../generated/prisma/client.js'

export const DeliveryEndpointRow = Type.Object({
  url: Type.String(),
  status: Type.String(),
  secret: Type.String(),
  previousSecret: OrNull(Type.String()),
  previousSecretUntil: OrNull(Type.Date()),
  failingSince: OrNull(Type.Date()),
})
export type DeliveryEndpoint = Static<typeof DeliveryEndpointRow>

/**
 * The endpoint as a delivery needs it, its secrets in base64 (sealed, as stored); undefined
 * once deleted. Read on the primary: a replica may not have its last change yet.
 */
export async function deliveryEndpoint (primary: SqlReader, id: string): Promise<DeliveryEndpoint | undefined> {
  const [endpoint] = await primary.rows(DeliveryEndpointRow, PrismaSql.sql`
    SELECT url, status::text AS status, encode(secret, 'base64') AS secret, encode(previous_secret, 'base64') AS "previousSecret",
           previous_secret_until AS "previousSecretUntil", failing_since AS "failingSince"
    FROM webhook_endpoints WHERE id = ${id}::uuid`)
  return endpoint
}
