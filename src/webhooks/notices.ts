import { createHash } from 'node:crypto'
import type { PgBoss } from 'pg-boss'
import type { Prisma } from '../db/database.js'
import { Prisma as PrismaSql } from '../generated/prisma/client.js'
import { enqueueEvents, queueDb } from './delivery-queue.js'
import type { NoticeType, WebhookEvent } from './events.js'

// Notices before an endpoint stops (issue 57, part 4): once an endpoint's failing spell
// reaches WEBHOOK_FAILING_AFTER failed attempts, and once it is disabled by anything but its
// partner's request (410, days of failures, an operator, its maker key gone), the
// organization's other enabled endpoints are sent a signed event saying so, queued as any
// retry is. Claimed and queued in one transaction: each is sent once, and never lost to a
// crash between the two.

/** A notice claimed, for the metrics and the log. */
export interface Notice { type: NoticeType, endpointId: string, organizationId: string, reason: string | null, recipients: number }

interface Claimed { id: string, organization_id: string, status: string, url: string, disabled_reason: string | null, failing_since: Date | null, consecutive_failures: number }

/** `webhook-id` of a notice to one endpoint: the same for its every attempt. */
const noticeEventId = (recipient: string, type: NoticeType, about: string, at: string): string =>
  'msg_' + createHash('sha256').update(`${recipient}:${type}:${about}:${at}`).digest('base64url').slice(0, 32)

function noticeOf (row: Claimed, at: string): Pick<WebhookEvent, 'type' | 'subject' | 'at' | 'data'> {
  const failingSince = row.failing_since?.toISOString() ?? null
  return row.status === 'enabled'
    ? { type: 'webhook_endpoint.failing', subject: row.id, at, data: { url: row.url, failing_since: failingSince, failures: row.consecutive_failures } }
    : { type: 'webhook_endpoint.disabled', subject: row.id, at, data: { url: row.url, reason: row.disabled_reason, failing_since: failingSince } }
}

/** Claims the notices due and queues each for the organization's other enabled endpoints. */
export async function sendNotices (prisma: Prisma, boss: PgBoss, failingAfter: number): Promise<Notice[]> {
  const due = PrismaSql.sql`(status = 'enabled' AND failing_notified_at IS NULL AND consecutive_failures >= ${failingAfter})
    OR (status = 'disabled' AND disabled_notified_at IS NULL AND disabled_reason IS DISTINCT FROM 'requested')`
  // Every dispatcher tick asks; one statement when none is due, the usual case.
  const [any] = await prisma.$queryRaw<Array<{ due: boolean }>>`SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE ${due}) AS due`
  if (any?.due !== true) return []
  return await prisma.$transaction(async tx => {
    const claimed = await tx.$queryRaw<Claimed[]>`
      UPDATE webhook_endpoints SET
        failing_notified_at = CASE WHEN status = 'enabled' THEN now() ELSE failing_notified_at END,
        disabled_notified_at = CASE WHEN status = 'disabled' THEN now() ELSE disabled_notified_at END
      WHERE ${due}
      RETURNING id::text AS id, organization_id::text AS organization_id, status::text AS status, url, disabled_reason, failing_since, consecutive_failures`
    if (claimed.length === 0) return []
    const recipients = await tx.$queryRaw<Array<{ id: string, organization_id: string }>>`
      SELECT id::text AS id, organization_id::text AS organization_id FROM webhook_endpoints
      WHERE organization_id = ANY(${[...new Set(claimed.map(c => c.organization_id))]}::uuid[]) AND status = 'enabled'`
    const at = new Date().toISOString()
    const notices: Notice[] = []
    for (const row of claimed) {
      const notice = noticeOf(row, at)
      const to = recipients.filter(r => r.organization_id === row.organization_id && r.id !== row.id)
      for (const { id } of to) {
        await enqueueEvents(boss, id, [{ ...notice, id: noticeEventId(id, notice.type as NoticeType, row.id, at), attempt: 1 }], { db: queueDb(tx) })
      }
      notices.push({ type: notice.type as NoticeType, endpointId: row.id, organizationId: row.organization_id, reason: row.disabled_reason, recipients: to.length })
    }
    return notices
  })
}
