import { Type, type Static } from '@sinclair/typebox'
import { OrNull } from '../db/row-schemas.js'
import type { SqlReader } from '../db/sql-reader.js'
import { sql } from '../db/sql.js'
import type { SecretBox } from './secrets.js'

export const DeliveryEndpointRow = Type.Object({
  url: Type.String(),
  status: Type.String(),
  secret: Type.String(),
  previousSecret: OrNull(Type.String()),
  previousSecretUntil: OrNull(Type.Date()),
  failingSince: OrNull(Type.Date()),
  /** The key that made it is valid and its user still of the endpoint's organization (what the dispatcher checks). */
  makerMayRead: Type.Boolean(),
})
export type DeliveryEndpoint = Static<typeof DeliveryEndpointRow>

/**
 * The endpoint as a delivery needs it, its secrets in base64 (sealed, as stored); undefined
 * once deleted. Read on the primary: a replica may not have its last change yet.
 */
export async function deliveryEndpoint (primary: SqlReader, id: string): Promise<DeliveryEndpoint | undefined> {
  const [endpoint] = await primary.rows(DeliveryEndpointRow, sql`
    SELECT e.url, e.status::text AS status, encode(e.secret, 'base64') AS secret, encode(e.previous_secret, 'base64') AS "previousSecret",
           e.previous_secret_until AS "previousSecretUntil", e.failing_since AS "failingSince",
           coalesce(k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()) AND u.organization_id = e.organization_id, false) AS "makerMayRead"
    FROM webhook_endpoints e LEFT JOIN api_keys k ON k.id = e.api_key_id LEFT JOIN users u ON u.id = k.user_id
    WHERE e.id = ${id}::uuid`)
  return endpoint
}

/** The secrets that sign its deliveries now: its own, and the previous one during a rotation's grace. Throws when they do not open. */
export function signingSecrets (box: SecretBox, endpointId: string, endpoint: DeliveryEndpoint, now: Date): string[] {
  const secrets = [box.open(endpointId, Buffer.from(endpoint.secret, 'base64'))]
  if (endpoint.previousSecret !== null && endpoint.previousSecretUntil !== null && endpoint.previousSecretUntil > now) secrets.push(box.open(endpointId, Buffer.from(endpoint.previousSecret, 'base64')))
  return secrets
}
