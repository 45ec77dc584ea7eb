import { fromPrisma, type PgBoss } from 'pg-boss'
import { hasProAccess } from '../auth/caller.js'
import { grantedScopes } from '../auth/scopes.js'
import type { Prisma } from '../db/database.js'
import { clientReader } from '../db/rows.js'
import { Prisma as PrismaNamespace } from '../generated/prisma/client.js'
import { historyId } from '../jobs/sync/history.js'
import { syncPage, type SyncPage } from '../jobs/sync/page.js'
import { quietSince } from '../jobs/sync/quiet.js'
import { bounded, intersect, parseSnapshot, snapshotText, type Snapshot } from '../jobs/sync/snapshot.js'
import { DELIVERY_QUEUE, enqueueEvents, type QueueDb } from './delivery-queue.js'
import { changeEventId, resetEventId, type WebhookEvent } from './events.js'
import { readPosition, storedPosition, type EndpointPosition } from './position.js'

// The dispatcher: reads the change log for every enabled endpoint as a sync reader would
// (src/jobs/sync/page.ts, from the endpoint's position), and in the same transaction enqueues
// an event per change for the endpoint and moves its position on. So a change is enqueued
// exactly when the position passes it, whatever fails when; writers pay nothing for it (the
// log is the sync's). One instance at a time (an advisory lock); the argument is
// docs/webhooks-design.md, "Why no change is missed".

const DISPATCH_LOCK = 8146720561340519
/** Changes read for one group of endpoints in one run; the rest in the next (its position says where). */
const CHANGES_PER_RUN = 5000
/**
 * Events a run may enqueue (changes read times the endpoints told), over every group; a group
 * reads at most its share, and the groups left wait for the next run. It bounds the run's
 * transaction, which a partner's PATCH of an endpoint waits for: 5,000 changes to 10
 * endpoints held one past the API's statement timeout (4 s) in the webhooks bench.
 */
const EVENTS_PER_RUN = 10_000
/** Runs of this process: where the next starts in the list of groups. */
let runs = 0
const PAGE = 100

export interface DispatchResult { endpoints: number, events: number, resets: number, disabled: number }

interface Endpoint {
  id: string
  organizationId: string
  events: string[]
  position: unknown
  apiKey: { revokedAt: Date | null, expiresAt: Date | null, scopes: string[] } | null
  organization: { plan: 'free' | 'pro', subscriptionStatus: 'active' | 'trialing' | 'past_due' | 'canceled', currentPeriodEnd: Date | null }
}

/** What an endpoint may be told now: as the key that made it may read (the rule sync follows). */
function readable (endpoint: Endpoint, now: Date): { jobs: boolean, analytics: boolean } | undefined {
  const key = endpoint.apiKey
  if (key === null || key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt <= now)) return undefined
  const scopes = grantedScopes(key.scopes)
  const subscription = { plan: endpoint.organization.plan, status: endpoint.organization.subscriptionStatus, currentPeriodEnd: endpoint.organization.currentPeriodEnd }
  return { jobs: scopes.includes('jobs:read'), analytics: scopes.includes('analytics:read') && hasProAccess(subscription, now) }
}

/** The point a page's statement saw: where a position starts over. */
const pointOf = (page: SyncPage, allowed: { jobs: boolean, analytics: boolean }): EndpointPosition => ({
  since: bounded(parseSnapshot(page.snapshot)!),
  generation: page.generation,
  history: historyId(page.history),
  analytics: allowed.analytics,
  jobs: allowed.jobs,
})

type Tx = PrismaNamespace.TransactionClient

/**
 * The events (`endpoint:type:job`) that tell a later change of their job too: for each
 * endpoint and job, the last event queued for it (in the queue's order), when it is due, not
 * fetched by a worker as this transaction sees the queue, and a first attempt. It is sent
 * after every change this transaction reads, and nothing queued after it says otherwise (a
 * `job.deleted` queued after a `job.updated` is not folded into the updated one); a retry
 * keeps its own schedule, never shortening a new change's. The endpoint is the job's group
 * (enqueueEvents): read from `data` on each event's row, it was detoasted once per event,
 * which made this query cost more than the deliveries it saved; and only the jobs this run
 * read changes of (`subjects`) are sorted, not the whole backlog (docs/webhooks-design.md, "Cost").
 */
async function queuedEvents (tx: Tx, endpointIds: string[], subjects: string[]): Promise<Set<string>> {
  if (endpointIds.length === 0 || subjects.length === 0) return new Set()
  const rows = await tx.$queryRaw<Array<{ event: string }>>`
    SELECT endpoint || ':' || type || ':' || subject AS event FROM (
      SELECT DISTINCT ON (endpoint, subject) endpoint, subject, type, coalescable FROM (
        SELECT j.group_id AS endpoint, e->>'subject' AS subject, e->>'type' AS type, j.created_on, o,
               j.state = 'created' AND j.start_after <= now() AND (e->>'attempt')::int = 1 AS coalescable
        FROM pgboss.job j CROSS JOIN LATERAL jsonb_array_elements(j.data->'events') WITH ORDINALITY AS x(e, o)
        WHERE j.name = ${DELIVERY_QUEUE} AND j.state IN ('created', 'retry', 'active') AND j.group_id = ANY (${endpointIds}::text[])
          AND e->>'subject' = ANY (${subjects}::text[])
      ) queued
      ORDER BY endpoint, subject, created_on DESC, o DESC
    ) last WHERE coalescable`
  return new Set(rows.map(r => r.event))
}

/**
 * Reads what changed since `position` for one organization (pages of the change log, in its
 * order) and where the position goes next: the intersection of what the pages saw, or, cut
 * short, where the next run resumes. `reset`: the position can no longer be answered exactly
 * (expired, another database history, or the key may now read what earlier runs skipped).
 */
async function readChanges (tx: Tx, organizationId: string, position: EndpointPosition, allowed: { jobs: boolean, analytics: boolean }, most: number): Promise<{ changes: SyncPage['changes'], next: EndpointPosition, reset: boolean }> {
  const reader = clientReader(tx)
  const since = { seen: position.since, generation: position.generation }
  let after = position.resume?.after
  let seen: Snapshot | undefined = position.resume?.seen
  const changes: SyncPage['changes'] = []
  for (;;) {
    const page = await syncPage(reader, organizationId, { since, limit: PAGE, analytics: allowed.analytics, ...(after !== undefined ? { after } : {}) })
    const here = parseSnapshot(page.snapshot)!
    const skippedBefore = (allowed.analytics && !position.analytics) || (allowed.jobs && !position.jobs)
    if (page.expired || historyId(page.history) !== position.history || skippedBefore) return { changes: [], next: pointOf(page, allowed), reset: true }
    changes.push(...page.changes)
    seen = seen === undefined ? here : intersect(seen, here)
    if (page.nextAfter === undefined) {
      return { changes, next: { since: bounded(seen), generation: position.generation, history: position.history, analytics: position.analytics && allowed.analytics, jobs: position.jobs && allowed.jobs }, reset: false }
    }
    after = page.nextAfter
    if (changes.length >= most) {
      return { changes, next: { ...position, analytics: position.analytics && allowed.analytics, jobs: position.jobs && allowed.jobs, resume: { after, seen } }, reset: false }
    }
  }
}

interface Group { organizationId: string, position: EndpointPosition | undefined, allowed: { jobs: boolean, analytics: boolean }, endpoints: Endpoint[] }

/**
 * The groups with nothing to read (quietSince), and the position each moves to: this
 * transaction's snapshot, as a page would have given. Only plain positions: one cut short,
 * unreadable, or that the key may now read more of is read by pages. An idle run so costs
 * one statement, not a page per group (on the embedded database, about the interval's CPU).
 */
async function quietGroups (tx: Tx, groups: Group[]): Promise<Map<Group, EndpointPosition>> {
  const plain = groups.filter(g => g.position !== undefined && g.position.resume === undefined &&
    !(g.allowed.analytics && !g.position.analytics) && !(g.allowed.jobs && !g.position.jobs))
  const quiet = new Map<Group, EndpointPosition>()
  if (plain.length === 0) return quiet
  const found = await quietSince(clientReader(tx), plain.map(g => ({ organizationId: g.organizationId, since: g.position!.since })))
  const since = bounded(parseSnapshot(found.snapshot)!)
  plain.forEach((group, i) => {
    const position = group.position!
    if (found.quiet[i] !== true || found.generation !== position.generation || historyId(found.history!) !== position.history) return
    quiet.set(group, { since, generation: position.generation, history: position.history, analytics: position.analytics && group.allowed.analytics, jobs: position.jobs && group.allowed.jobs })
  })
  return quiet
}

/**
 * One run of the dispatcher: every enabled endpoint's changes since its position, enqueued as
 * events, and its position moved on, in one REPEATABLE READ transaction (one snapshot for
 * every read, so that endpoints of one organization read together end at one position and
 * are read together from then on). Undefined when another instance holds the run.
 */
export async function dispatchChanges (prisma: Prisma, boss: PgBoss, options: { replicated?: boolean, now?: () => Date } = {}): Promise<DispatchResult | undefined> {
  const now = options.now ?? (() => new Date())
  return await prisma.$transaction(async tx => {
    const [lock] = await tx.$queryRaw<Array<{ got: boolean }>>`SELECT pg_try_advisory_xact_lock(${DISPATCH_LOCK}) AS got`
    if (lock?.got !== true) return undefined
    // With replicas: a WAL position past the commit of every change this snapshot shows, for
    // the deliveries to wait on (delivery-queue.ts, DeliveryJob.lsn).
    const lsn = options.replicated === true ? (await tx.$queryRaw<Array<{ lsn: string }>>`SELECT pg_current_wal_insert_lsn()::text AS lsn`)[0]!.lsn : undefined
    const at = now()
    const result: DispatchResult = { endpoints: 0, events: 0, resets: 0, disabled: 0 }
    // The enabled endpoints this run moves, locked until it commits, first thing after the
    // snapshot: a partner's PATCH or a delivery's failing_since then waits for the run instead
    // of failing it at the end (40001 on the position's UPDATE); one being changed right now
    // is left to the next run. FOR NO KEY UPDATE: the attempts' foreign key checks do not wait.
    const lockable = await tx.$queryRaw<Array<{ id: string }>>`SELECT id::text AS id FROM webhook_endpoints WHERE status = 'enabled' FOR NO KEY UPDATE SKIP LOCKED`
    const endpoints: Endpoint[] = await tx.webhookEndpoint.findMany({
      where: { status: 'enabled', id: { in: lockable.map(r => r.id) } },
      select: {
        id: true,
        organizationId: true,
        events: true,
        position: true,
        apiKey: { select: { revokedAt: true, expiresAt: true, scopes: true } },
        organization: { select: { plan: true, subscriptionStatus: true, currentPeriodEnd: true } },
      },
      orderBy: { id: 'asc' },
    })
    // Endpoints at one position of one organization, told the same, are read once.
    const groups = new Map<string, Group>()
    const revoked: string[] = []
    for (const endpoint of endpoints) {
      const allowed = readable(endpoint, at)
      if (allowed === undefined) { revoked.push(endpoint.id); continue }
      const position = readPosition(endpoint.position)
      const key = `${endpoint.organizationId}|${JSON.stringify(endpoint.position)}|${allowed.jobs}|${allowed.analytics}`
      const group = groups.get(key) ?? groups.set(key, { organizationId: endpoint.organizationId, position, allowed, endpoints: [] }).get(key)!
      group.endpoints.push(endpoint)
    }
    if (revoked.length > 0) {
      // The key that made them is revoked, expired or gone: they may be told nothing more.
      await tx.webhookEndpoint.updateMany({ where: { id: { in: revoked } }, data: { status: 'disabled', disabledReason: 'key_revoked' } })
      result.disabled = revoked.length
    }
    const db: QueueDb = fromPrisma(tx)
    const seenAt = at.toISOString()
    // A run enqueues at most EVENTS_PER_RUN, starting at another group each run, so that a
    // backlog over many organizations neither outgrows the transaction nor starves one.
    const ordered = [...groups.values()]
    const first = ordered.length === 0 ? 0 : runs++ % ordered.length
    let read = 0
    const readGroups = []
    const quiet = await quietGroups(tx, ordered)
    for (const group of [...ordered.slice(first), ...ordered.slice(0, first)]) {
      if (read >= EVENTS_PER_RUN) break
      const still = quiet.get(group)
      if (still !== undefined) { readGroups.push({ group, changes: [], next: still, reset: false }); continue }
      // A position that cannot be read (edited by hand) starts over like an expired one.
      const start = group.position ?? { since: { xmin: 1n, xmax: 1n, xip: [] }, generation: -1, history: '', analytics: true, jobs: true }
      const most = Math.min(CHANGES_PER_RUN, Math.max(PAGE, Math.floor(EVENTS_PER_RUN / group.endpoints.length)))
      const changed = await readChanges(tx, group.organizationId, start, group.allowed, most)
      read += changed.changes.length * group.endpoints.length
      readGroups.push({ group, ...changed })
    }
    // Before anything is enqueued: this run's own jobs are not waiting events.
    const waiting = await queuedEvents(tx, endpoints.map(e => e.id), [...new Set(readGroups.flatMap(g => g.changes.map(c => c.jobId)))])
    for (const { group, changes, next, reset } of readGroups) {
      for (const endpoint of group.endpoints) {
        const events: WebhookEvent[] = []
        if (reset) {
          events.push({ id: resetEventId(endpoint.id, `${next.history}:${next.generation}:${snapshotText(next.since)}`), type: 'sync.reset', subject: endpoint.id, at: seenAt, attempt: 1 })
          result.resets++
        } else if (group.allowed.jobs) {
          for (const change of changes) {
            const type = change.present ? 'job.updated' : 'job.deleted'
            // An event of the same type for the job, queued and not yet fetched, tells the partner
            // of this change too: it is sent after this change committed, and the partner reads
            // the job then (docs/webhooks-design.md, "Coalescing").
            if (!endpoint.events.includes(type) || waiting.has(`${endpoint.id}:${type}:${change.jobId}`)) continue
            events.push({ id: changeEventId(endpoint.id, next, change.xid, change.jobId), type, subject: change.jobId, at: seenAt, attempt: 1 })
          }
        }
        await enqueueEvents(boss, endpoint.id, events, { db, ...(lsn !== undefined ? { lsn } : {}) })
        result.events += events.length
      }
      if (reset || changes.length > 0 || JSON.stringify(storedPosition(next)) !== JSON.stringify(group.position === undefined ? null : storedPosition(group.position))) {
        // In SQL: the client would set updated_at, which says when the partner changed it.
        await tx.$executeRaw`UPDATE webhook_endpoints SET position = ${JSON.stringify(storedPosition(next))}::jsonb WHERE id = ANY (${group.endpoints.map(e => e.id)}::uuid[])`
      }
      result.endpoints += group.endpoints.length
    }
    return result
  }, { isolationLevel: PrismaNamespace.TransactionIsolationLevel.RepeatableRead, maxWait: 5000, timeout: 60_000 })
}
