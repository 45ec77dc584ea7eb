import { Type, type Static } from '@sinclair/typebox'
import { OrNull } from '../db/row-schemas.js'
import { sql, type Sql } from '../db/sql.js'
import type { SqlReader } from '../db/sql-reader.js'

// What notices.ts reads: whether a notice is due, the notices claimed, and who is told.

/** Endpoints with a notice due: failing for `failingAfter` attempts, or disabled but not at its partner's request. */
export const noticeDue = (failingAfter: number): Sql => sql`(status = 'enabled' AND failing_notified_at IS NULL AND consecutive_failures >= ${failingAfter})
    OR (status = 'disabled' AND disabled_notified_at IS NULL AND disabled_reason IS DISTINCT FROM 'requested')`

const DueRow = Type.Object({ due: Type.Boolean() })

/** Whether any endpoint has a notice `due` (noticeDue). */
export async function anyNoticeDue (reader: SqlReader, due: Sql): Promise<boolean> {
  const [any] = await reader.rows(DueRow, sql`SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE ${due}) AS due`)
  return any?.due === true
}

const ClaimedRow = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  status: Type.String(),
  url: Type.String(),
  disabled_reason: OrNull(Type.String()),
  failing_since: OrNull(Type.Date()),
  consecutive_failures: Type.Integer(),
})
export type Claimed = Static<typeof ClaimedRow>

/** `max` endpoints with a notice `due`, marked told; rows another instance is claiming are skipped, not waited for. */
export async function claimNotices (reader: SqlReader, due: Sql, max: number): Promise<Claimed[]> {
  return await reader.rows(ClaimedRow, sql`
      UPDATE webhook_endpoints SET
        failing_notified_at = CASE WHEN status = 'enabled' THEN now() ELSE failing_notified_at END,
        disabled_notified_at = CASE WHEN status = 'disabled' THEN now() ELSE disabled_notified_at END
      WHERE id IN (SELECT id FROM webhook_endpoints WHERE ${due} LIMIT ${max} FOR UPDATE SKIP LOCKED)
      RETURNING id::text AS id, organization_id::text AS organization_id, status::text AS status, url, disabled_reason, failing_since, consecutive_failures`)
}

const RecipientRow = Type.Object({ id: Type.String(), organization_id: Type.String() })

/** The enabled endpoints of these organizations. */
export async function noticeRecipients (reader: SqlReader, organizationIds: string[]): Promise<Array<Static<typeof RecipientRow>>> {
  return await reader.rows(RecipientRow, sql`
      SELECT id::text AS id, organization_id::text AS organization_id FROM webhook_endpoints
      WHERE organization_id = ANY(${organizationIds}::uuid[]) AND status = 'enabled'`)
}
