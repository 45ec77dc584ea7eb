import type { PgBoss } from 'pg-boss'
import type { Prisma } from '../db/database.js'
import { clientReader } from '../db/sql-reader.js'
import { deliveryJobs, insertDeliveryJobs, queueDb } from './delivery-queue.js'
import { anyNoticeDue, claimNotices, noticeDue, noticeRecipients, type Claimed } from './notice-claims.js'
import { noticeEventId, type NoticeType, type WebhookEvent } from './events.js'

// Notices before an endpoint stops (issue 57, part 4): once an endpoint's failing spell
// reaches WEBHOOK_FAILING_AFTER failed attempts, and once it is disabled by anything but its
// partner's request (410, days of failures, an operator, its maker key gone), the
// organization's other enabled endpoints are sent a signed event saying so, queued as any
// retry is. Claimed and queued in one transaction: each is sent once, and never lost to a
// crash between the two.

/** A notice claimed, for the metrics and the log. */
export interface Notice { type: NoticeType, endpointId: string, organizationId: string, reason: string | null, recipients: number }

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
  const due = noticeDue(failingAfter)
  // Every dispatcher tick asks; one statement when none is due, the usual case.
  if (!await anyNoticeDue(clientReader(prisma), due)) return []
  return await prisma.$transaction(async tx => {
    const reader = clientReader(tx)
    const claimed = await claimNotices(reader, due, CLAIM_MAX)
    if (claimed.length === 0) return []
    const recipients = await noticeRecipients(reader, [...new Set(claimed.map(c => c.organization_id))])
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
