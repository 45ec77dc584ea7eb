import type { PgBoss } from 'pg-boss'
import type { Prisma } from '../db/database.js'
import { sql } from '../db/sql.js'
import { deliveryJobs, insertDeliveryJobs, queueDb } from './delivery-queue.js'
import { noticeEventId, type NoticeType, type WebhookEvent } from './events.js'

// Notices before an endpoint stops (issue 57, part 4): once an endpoint's failing spell
// reaches WEBHOOK_FAILING_AFTER failed attempts, and once it is disabled by anything but its
// partner's request (410, days of failures, an operator, its maker key gone), the
// organization's other enabled endpoints are sent a signed event saying so, queued as any
// retry is. Claimed and queued in one transaction: each is sent once, and never lost to a
// crash between the two.

/** A notice claimed, for the metrics and the log. */
export interface Notice { type: NoticeType, endpointId: string, organizationId: string, reason: string | null, recipients: number }

interface Claimed { id: string, organization_id: string, status: string, url: string, disabled_reason: string | null, failing_since: Date | null, consecutive_failures: number }

/** Notices claimed at once: a tick when every endpoint fails (this side's egress down) stays short; the next tick takes more. */
const CLAIM_MAX = 100

// The endpoint's origin alone: a partner's URL may carry a secret in its path or query, and
// the other endpoints may be another vendor's.
const originOf = (url: string): string => { try { return new URL(url).origin } catch { return '' } }

function noticeOf (row: Claimed, at: string): Pick<WebhookEvent, 'type' | 'subject' | 'at' | 'data'> & { type: NoticeType } {
  const failingSince = row.failing_since?.toISOString() ?? null
  return row.status === 'enabled'
    ? { type: 'webhook_endpoint.failing', subject: row.id, at, data: { origin: originOf(row.url), failing_since: failingSince, failures: row.consecutive_failures } }
    : { type: 'webhook_endpoint.disabled', subject: row.id, at, data: { origin: originOf(row.url), reason: row.disabled_reason, failing_since: failingSince } }
}

/** Claims the notices due and queues each for the organization's other enabled endpoints. */
export async function sendNotices (prisma: Prisma, boss: PgBoss, failingAfter: number): Promise<Notice[]> {
  const due = sql`(status = 'enabled' AND failing_notified_at IS NULL AND consecutive_failures >= ${failingAfter})
    OR (status = 'disabled' AND disabled_notified_at IS NULL AND disabled_reason IS DISTINCT FROM 'requested')`
  // Every dispatcher tick asks; one statement when none is due, the usual case.
  const [any] = await prisma.$queryRaw<Array<{ due: boolean }>>`SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE ${due}) AS due`
  if (any?.due !== true) return []
  return await prisma.$transaction(async tx => {
    // Rows another instance is claiming are skipped, not waited for: it sends those.
    const claimed = await tx.$queryRaw<Claimed[]>`
      UPDATE webhook_endpoints SET
        failing_notified_at = CASE WHEN status = 'enabled' THEN now() ELSE failing_notified_at END,
        disabled_notified_at = CASE WHEN status = 'disabled' THEN now() ELSE disabled_notified_at END
      WHERE id IN (SELECT id FROM webhook_endpoints WHERE ${due} LIMIT ${CLAIM_MAX} FOR UPDATE SKIP LOCKED)
      RETURNING id::text AS id, organization_id::text AS organization_id, status::text AS status, url, disabled_reason, failing_since, consecutive_failures`
    if (claimed.length === 0) return []
    const recipients = await tx.$queryRaw<Array<{ id: string, organization_id: string }>>`
      SELECT id::text AS id, organization_id::text AS organization_id FROM webhook_endpoints
      WHERE organization_id = ANY(${[...new Set(claimed.map(c => c.organization_id))]}::uuid[]) AND status = 'enabled'`
    const at = new Date().toISOString()
    const jobs: ReturnType<typeof deliveryJobs> = []
    const notices = claimed.map(row => {
      const notice = noticeOf(row, at)
      const to = recipients.filter(r => r.organization_id === row.organization_id && r.id !== row.id)
      for (const { id } of to) jobs.push(...deliveryJobs(id, [{ ...notice, id: noticeEventId(id, notice.type, row.id, at), attempt: 1 }]))
      return { type: notice.type, endpointId: row.id, organizationId: row.organization_id, reason: row.disabled_reason, recipients: to.length }
    })
    await insertDeliveryJobs(boss, jobs, queueDb(tx))
    return notices
  }, { maxWait: 5000, timeout: 30_000 })
}
