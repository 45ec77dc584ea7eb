import { hasProAccess } from '../auth/caller.js'
import { grantedScopes } from '../auth/scopes.js'
import type { Prisma } from '../db/database.js'
import { clientReader } from '../db/rows.js'
import { Prisma as PrismaNamespace } from '../generated/prisma/client.js'
import { historyId } from '../jobs/sync/history.js'
import { changesPage, type ChangesPage } from '../jobs/sync/page.js'
import { quietSince } from '../jobs/sync/quiet.js'
import { bounded, intersect, parseSnapshot, snapshotText } from '../jobs/sync/snapshot.js'
import type { DeliveryEndpoint } from './delivery-endpoint.js'
import { changeEventId, resetEventId, type WebhookEvent } from './events.js'
import { readPosition, storedPosition, type EndpointPosition } from './position.js'

// The dispatcher: reads the change log for every enabled endpoint as a sync reader would
// (src/jobs/sync/page.ts, from the endpoint's position) and hands each endpoint with events a
// batch to send (src/webhooks/deliver.ts, sendBatch), which moves the position on only once
// its events are sent or queued. Until then the endpoint is leased (sending_until): no run
// reads it again, so a change is sent before its position passes it, whatever fails when;
// writers pay nothing for it (the log is the sync's). One run at a time over every instance
// (an advisory lock); the argument is docs/webhooks-design.md, "Why no change is missed".

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
/** Changes a group reads at least in a run, however many endpoints it tells. */
const LEAST_PER_GROUP = 100

export interface DispatchResult { endpoints: number, events: number, resets: number, disabled: number, batches: Batch[] }

/** An endpoint's events to send, and where its position goes once they are sent (or queued). */
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

interface Endpoint {
  id: string
  organizationId: string
  url: string
  events: string[]
  position: unknown
  secret: Uint8Array
  previousSecret: Uint8Array | null
  previousSecretUntil: Date | null
  failingSince: Date | null
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
const pointOf = (page: ChangesPage, allowed: { jobs: boolean, analytics: boolean }): EndpointPosition => ({
  since: bounded(parseSnapshot(page.snapshot)!),
  generation: page.generation,
  history: historyId(page.history),
  analytics: allowed.analytics,
  jobs: allowed.jobs,
})

type Tx = PrismaNamespace.TransactionClient

/**
 * Reads what changed since `position` for one organization (at most `most` changes: one page
 * of the change log, in its order) and where the position goes next: the intersection of what
 * this page and the earlier ones of a position cut short saw, or, cut short again, where the
 * next run resumes. `reset`: the position can no longer be answered exactly (expired, another
 * database history, or the key may now read what earlier runs skipped).
 */
async function readChanges (tx: Tx, organizationId: string, position: EndpointPosition, allowed: { jobs: boolean, analytics: boolean }, most: number): Promise<{ changes: ChangesPage['changes'], next: EndpointPosition, reset: boolean }> {
  const after = position.resume?.after
  const page = await changesPage(clientReader(tx), organizationId, { since: { seen: position.since, generation: position.generation }, limit: most, analytics: allowed.analytics, ...(after !== undefined ? { after } : {}) })
  const here = parseSnapshot(page.snapshot)!
  const skippedBefore = (allowed.analytics && !position.analytics) || (allowed.jobs && !position.jobs)
  if (page.expired || historyId(page.history) !== position.history || skippedBefore) return { changes: [], next: pointOf(page, allowed), reset: true }
  const seen = position.resume === undefined ? here : intersect(position.resume.seen, here)
  const told = { analytics: position.analytics && allowed.analytics, jobs: position.jobs && allowed.jobs }
  if (page.nextAfter === undefined) return { changes: page.changes, next: { since: bounded(seen), generation: position.generation, history: position.history, ...told }, reset: false }
  return { changes: page.changes, next: { ...position, ...told, resume: { after: page.nextAfter, seen } }, reset: false }
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
 * One run of the dispatcher: every enabled endpoint not leased, its changes since its
 * position read in one REPEATABLE READ transaction (one snapshot for every read, so that
 * endpoints of one organization read together end at one position and are read together from
 * then on). An endpoint with nothing to be told moves its position here; one with events is
 * leased for `leaseMs` and returned as a batch, whose sending moves it. Undefined when another
 * instance holds the run.
 */
export async function dispatchChanges (prisma: Prisma, options: { leaseMs: number, replicated?: boolean, now?: () => Date }): Promise<DispatchResult | undefined> {
  const now = options.now ?? (() => new Date())
  return await prisma.$transaction(async tx => {
    const [lock] = await tx.$queryRaw<Array<{ got: boolean }>>`SELECT pg_try_advisory_xact_lock(${DISPATCH_LOCK}) AS got`
    if (lock?.got !== true) return undefined
    // With replicas: a WAL position past the commit of every change this snapshot shows, for
    // the sends to wait on (delivery-queue.ts, DeliveryJob.lsn).
    const lsn = options.replicated === true ? (await tx.$queryRaw<Array<{ lsn: string }>>`SELECT pg_current_wal_insert_lsn()::text AS lsn`)[0]!.lsn : undefined
    const at = now()
    const result: DispatchResult = { endpoints: 0, events: 0, resets: 0, disabled: 0, batches: [] }
    // The enabled endpoints this run may move, locked until it commits, first thing after the
    // snapshot: a partner's PATCH then waits for the run instead of failing it at the end
    // (40001 on the position's UPDATE); one being changed right now is left to the next run,
    // and so is one whose batch is still being sent (its lease). FOR NO KEY UPDATE: the
    // attempts' foreign key checks do not wait.
    const lockable = await tx.$queryRaw<Array<{ id: string }>>`SELECT id::text AS id FROM webhook_endpoints WHERE status = 'enabled' AND (sending_until IS NULL OR sending_until < now()) FOR NO KEY UPDATE SKIP LOCKED`
    const endpoints: Endpoint[] = await tx.webhookEndpoint.findMany({
      where: { status: 'enabled', id: { in: lockable.map(r => r.id) } },
      select: {
        id: true,
        organizationId: true,
        url: true,
        events: true,
        position: true,
        secret: true,
        previousSecret: true,
        previousSecretUntil: true,
        failingSince: true,
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
    const seenAt = at.toISOString()
    // A run reads at most EVENTS_PER_RUN, starting at another group each run, so that a
    // backlog over many organizations neither outgrows the run nor starves one.
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
      const most = Math.min(CHANGES_PER_RUN, Math.max(LEAST_PER_GROUP, Math.floor(EVENTS_PER_RUN / group.endpoints.length)))
      const changed = await readChanges(tx, group.organizationId, start, group.allowed, most)
      read += changed.changes.length * group.endpoints.length
      readGroups.push({ group, ...changed })
    }
    const moved: Array<{ ids: string[], next: EndpointPosition }> = []
    const leased: Array<{ endpoint: Endpoint, events: WebhookEvent[], next: EndpointPosition }> = []
    for (const { group, changes, next, reset } of readGroups) {
      const quietOnes: string[] = []
      for (const endpoint of group.endpoints) {
        const events: WebhookEvent[] = []
        if (reset) {
          events.push({ id: resetEventId(endpoint.id, `${next.history}:${next.generation}:${snapshotText(next.since)}`), type: 'sync.reset', subject: endpoint.id, at: seenAt, attempt: 1 })
          result.resets++
        } else if (group.allowed.jobs) {
          // One event per job: sent after every change this snapshot shows, it tells them all
          // (the partner reads the job then); named after the job's last change read.
          const last = new Map<string, ChangesPage['changes'][number]>()
          for (const change of changes) { last.delete(change.jobId); last.set(change.jobId, change) }
          for (const change of last.values()) {
            const type = change.present ? 'job.updated' : 'job.deleted'
            if (!endpoint.events.includes(type)) continue
            events.push({ id: changeEventId(endpoint.id, next, change.xid, change.jobId), type, subject: change.jobId, at: seenAt, attempt: 1 })
          }
        }
        if (events.length > 0) leased.push({ endpoint, events, next })
        else if (reset || changes.length > 0 || JSON.stringify(storedPosition(next)) !== JSON.stringify(group.position === undefined ? null : storedPosition(group.position))) quietOnes.push(endpoint.id)
        result.events += events.length
      }
      if (quietOnes.length > 0) moved.push({ ids: quietOnes, next })
      result.endpoints += group.endpoints.length
    }
    for (const { ids, next } of moved) {
      // In SQL: the client would set updated_at, which says when the partner changed it.
      await tx.$executeRaw`UPDATE webhook_endpoints SET position = ${JSON.stringify(storedPosition(next))}::jsonb WHERE id = ANY (${ids}::uuid[])`
    }
    if (leased.length > 0) {
      // The database's clock, the one the next run compares with; RETURNING: the lease exactly as stored.
      const [lease] = await tx.$queryRaw<Array<{ until: Date }>>`
        UPDATE webhook_endpoints SET sending_until = date_trunc('milliseconds', now()) + ${options.leaseMs} * interval '1 millisecond'
        WHERE id = ANY (${leased.map(l => l.endpoint.id)}::uuid[]) RETURNING sending_until AS until`
      for (const { endpoint, events, next } of leased) {
        result.batches.push({
          endpointId: endpoint.id,
          endpoint: {
            url: endpoint.url,
            status: 'enabled',
            secret: Buffer.from(endpoint.secret).toString('base64'),
            previousSecret: endpoint.previousSecret === null ? null : Buffer.from(endpoint.previousSecret).toString('base64'),
            previousSecretUntil: endpoint.previousSecretUntil,
            failingSince: endpoint.failingSince,
          },
          events,
          next,
          lease: lease!.until,
          ...(lsn !== undefined ? { lsn } : {}),
        })
      }
    }
    return result
  }, { isolationLevel: PrismaNamespace.TransactionIsolationLevel.RepeatableRead, maxWait: 5000, timeout: 60_000 })
}
