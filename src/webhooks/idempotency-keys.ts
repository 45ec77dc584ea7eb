import { Type, type Static } from '@sinclair/typebox'
import { OrNull } from '../db/row-schemas.js'
import { sql } from '../db/sql.js'
import type { SqlReader, SqlWriter } from '../db/sql-reader.js'

// The statements of idempotency.ts: a key taken for a request, the first answer of a key
// taken already, and the answer kept (or the key let go after a 5xx).

const ClaimedRow = Type.Object({ claimed: Type.Boolean() })

/**
 * Whether the request takes the key: a new one, one 24 hours old, or one whose request never
 * answered (a process gone) in a minute.
 */
export async function claimKey (db: SqlReader, apiKeyId: string, key: string, fingerprint: Uint8Array): Promise<boolean> {
  const [claimed] = await db.rows(ClaimedRow, sql`
    INSERT INTO idempotency_keys (api_key_id, key, fingerprint) VALUES (${apiKeyId}::uuid, ${key}, ${fingerprint})
    ON CONFLICT (api_key_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status_code = NULL, response = NULL, created_at = now()
      WHERE idempotency_keys.created_at < now() - interval '24 hours' OR (idempotency_keys.status_code IS NULL AND idempotency_keys.created_at < now() - interval '1 minute')
    RETURNING true AS claimed`)
  return claimed !== undefined
}

const FirstAnswerRow = Type.Object({ fingerprint: Type.Uint8Array(), statusCode: OrNull(Type.Integer()), response: OrNull(Type.Uint8Array()) })
export type FirstAnswer = Static<typeof FirstAnswerRow>

/** The key's request and its answer, sealed (status null while it is being answered); undefined when gone meanwhile. */
export async function firstAnswer (db: SqlReader, apiKeyId: string, key: string): Promise<FirstAnswer | undefined> {
  const [first] = await db.rows(FirstAnswerRow, sql`
    SELECT fingerprint, status_code AS "statusCode", response FROM idempotency_keys WHERE api_key_id = ${apiKeyId}::uuid AND key = ${key}`)
  return first
}

/** The key let go: its request answered a 5xx, which a retry runs again. */
export async function forgetKey (db: SqlWriter, apiKeyId: string, key: string): Promise<void> {
  await db.execute(sql`DELETE FROM idempotency_keys WHERE api_key_id = ${apiKeyId}::uuid AND key = ${key}`)
}

/** The answer kept, sealed, for the key's retries. */
export async function keepAnswer (db: SqlWriter, apiKeyId: string, key: string, statusCode: number, sealed: Uint8Array): Promise<void> {
  await db.execute(sql`UPDATE idempotency_keys SET status_code = ${statusCode}, response = ${sealed} WHERE api_key_id = ${apiKeyId}::uuid AND key = ${key}`)
}
