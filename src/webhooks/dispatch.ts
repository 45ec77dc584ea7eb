import type { Prisma } from '../db/database.js'
import { clientReader } from '../db/sql-reader.js'
import { Prisma as PrismaNamespace } from '../generated/prisma/client.js'
import type { Batch } from './batch.js'
import { leaseEndpoints } from './batch.js'
import { takeDispatchLock, walInsertPosition } from './dispatch-lock.js'
import { chunksOf, dispatchCandidates, type Chunk, type ChunkEndpoint } from './dispatch-candidates.js'
import { byOrganization, pageLimit, readFrom } from './dispatch-order.js'
import { chunkEvents } from './dispatch-events.js'
import { isolated, quietChunks, readChanges, type ChunkRead } from './dispatch-read.js'
import { snapshotText } from '../changes/snapshot.js'
import { storedPosition, type EndpointPosition } from './position.js'

// The dispatcher: reads the change log for every enabled endpoint as a sync reader would
// (from the endpoint's position), in chunks of endpoints at one position, and hands each
// endpoint with events a batch to send (src/webhooks/deliverer.ts, sendBatch), which moves the
// position on only once its events are sent or queued. Until then the endpoint is leased
// (sending_until): no run reads it again, so a change is sent before its position passes it,
// whatever fails when; writers pay nothing for it (the log is the sync's). One run at a time
// over every instance (an advisory lock); docs/webhooks-design.md, "Why no change is missed".

/**
 * Events a run hands out (changes read times the endpoints told, resets included), over every
 * chunk, whatever the fan-out: it bounds the run's memory and its transaction, which a
 * partner's PATCH waits for. Each organization is given a fair share of what is left.
 */
export const EVENTS_PER_RUN = 10_000
/**
 * Quiet endpoints whose position a run moves on to its snapshot, at most, the longest unmoved
 * first: a row each, so 15,000 quiet endpoints cost a run 1,000 updates, not 15,000.
 */
const QUIET_MOVES_PER_RUN = 1000
/** The wait before a chunk whose read failed is read again, doubling to at most 5 minutes. */
const pauseMs = (failures: number): number => Math.min(300_000, 1000 * 2 ** Math.min(failures, 9))

/** What an operator reads of a failed read: PostgreSQL's message, without the client's framing. */
const reason = (error: unknown): string => {
  const text = error instanceof Error ? error.message : String(error)
  return (/Message: `([^`]*)`/.exec(text)?.[1] ?? text).replace(/\s+/g, ' ').trim().slice(0, 1000)
}

export interface DispatchResult {
  endpoints: number
  events: number
  resets: number
  failed: number
  batches: Batch[]
  /** The endpoints this run disabled, and why (their maker key may read nothing more of the organization). */
  stopped: Array<{ endpointId: string, reason: 'key_revoked' | 'key_moved' }>
}

type Tx = PrismaNamespace.TransactionClient
interface Read { chunk: Chunk, read: ChunkRead, quiet: boolean }
/** What a run may hand out: events, and batches (endpoints leased), what the sender has room for. */
export interface Budget { events: number, batches: number }

/**
 * Reads the chunks' changes until the budget is spent: each organization a fair share of
 * what is left (at least a chunk of it, a change each, while the budget allows), each of its
 * chunks a fair share of that. A chunk whose read fails is undone alone (a savepoint) and
 * returned among `failed`.
 */
async function readChunks (tx: Tx, chunks: Chunk[], at: number, budget: Budget): Promise<{ reads: Read[], failed: Array<{ chunk: Chunk, error: unknown }> }> {
  const quiet = await quietChunks(tx, chunks, at)
  const reads: Read[] = [...quiet].map(([chunk, next]) => ({ chunk, read: { changes: [], next, reset: false }, quiet: true }))
  const failed: Array<{ chunk: Chunk, error: unknown }> = []
  let { events, batches } = budget
  const organizations = byOrganization(chunks.filter(c => !quiet.has(c)))
  for (const [i, organization] of organizations.entries()) {
    let share = Math.floor(events / (organizations.length - i))
    for (const [j, chunk] of organization.entries()) {
      const size = chunk.endpoints.length
      if (events < size || batches < size) return { reads, failed } // the next run starts here
      if (j > 0 && share < size) break // this organization's share is spent: its next chunk starts the next run
      // Its share of the organization's, among the chunks of it this run can still lease.
      const servable = Math.max(1, Math.min(organization.length - j, Math.floor(batches / size)))
      const most = pageLimit(Math.floor(share / servable), size)
      readFrom(chunk)
      const outcome = await isolated(tx, async () => await readChanges(tx, chunk, most, at))
      if ('error' in outcome) { failed.push({ chunk, error: outcome.error }); continue }
      const spent = (outcome.value.reset ? 1 : outcome.value.changes.length) * size
      share -= spent
      events -= spent
      if (spent > 0) batches -= size
      reads.push({ chunk, read: outcome.value, quiet: false })
    }
  }
  return { reads, failed }
}

/** The quiet chunks whose positions this run moves: the longest unmoved first, QUIET_MOVES_PER_RUN endpoints at most. */
function quietMoves (reads: Read[]): Set<Chunk> {
  // Not one whose position is the run's snapshot already (nothing committed since): an idle run writes nothing.
  const quiet = reads.filter(r => r.quiet && snapshotText(r.read.next.since) !== (r.chunk.position === undefined ? '' : snapshotText(r.chunk.position.since)))
    .map(r => r.chunk).sort((a, b) => (a.position?.at ?? 0) - (b.position?.at ?? 0))
  const moved = new Set<Chunk>()
  let endpoints = 0
  for (const chunk of quiet) {
    if (endpoints + chunk.endpoints.length > QUIET_MOVES_PER_RUN) break
    moved.add(chunk)
    endpoints += chunk.endpoints.length
  }
  return moved
}

/** Whether an endpoint told nothing moves its position (a quiet one: when among `quietMoved`). */
function moves (chunk: Chunk, { read, quiet }: Read, quietMoved: Set<Chunk>): boolean {
  if (read.reset || read.changes.length > 0) return true
  if (quiet) return quietMoved.has(chunk)
  return chunk.position === undefined || JSON.stringify(storedPosition(read.next)) !== JSON.stringify(storedPosition(chunk.position))
}

/**
 * One run of the dispatcher: the enabled endpoints not leased, their changes since their
 * positions read in one REPEATABLE READ transaction (one snapshot for every read, so that
 * endpoints of one organization read together end at one position and are read together from
 * then on). An endpoint with nothing to be told moves its position here; one with events is
 * leased for `leaseMs` and returned as a batch, whose sending moves it; at most `budget` of
 * them. Undefined when another instance holds the run.
 */
export async function dispatchChanges (prisma: Prisma, options: { leaseMs: number, budget?: Budget, replicated?: boolean, now?: () => Date, log?: { warn: (fields: object, message: string) => void } }): Promise<DispatchResult | undefined> {
  const now = options.now ?? (() => new Date())
  return await prisma.$transaction(async tx => {
    const reader = clientReader(tx)
    if (!await takeDispatchLock(reader)) return undefined
    // With replicas: the WAL position the sends wait on (delivery-queue.ts, DeliveryJob.lsn).
    const lsn = options.replicated === true ? await walInsertPosition(reader) : undefined
    const at = now()
    const result: DispatchResult = { endpoints: 0, events: 0, resets: 0, failed: 0, batches: [], stopped: [] }
    const { chunks, stopped } = chunksOf(await dispatchCandidates(reader), at)
    for (const [reason, ids] of stopped) {
      // The key that made them is revoked, expired, gone, or its user left the organization: they may be told nothing more.
      await tx.webhookEndpoint.updateMany({ where: { id: { in: ids } }, data: { status: 'disabled', disabledReason: reason } })
      result.stopped.push(...ids.map(endpointId => ({ endpointId, reason })))
    }
    const { reads, failed } = await readChunks(tx, chunks, at.getTime(), options.budget ?? { events: EVENTS_PER_RUN, batches: EVENTS_PER_RUN })
    const quietMoved = quietMoves(reads)
    const moved = new Map<string, string[]>()
    const leased: Array<{ endpoint: ChunkEndpoint, events: Batch['events'], next: EndpointPosition }> = []
    const recovered: string[] = []
    for (const entry of reads) {
      const next = JSON.stringify(storedPosition(entry.read.next))
      for (const { endpoint, events } of chunkEvents(entry.chunk, entry.read, at.toISOString())) {
        if (endpoint.dispatchFailures > 0) recovered.push(endpoint.id)
        if (events.length > 0) leased.push({ endpoint, events, next: entry.read.next })
        else if (moves(entry.chunk, entry, quietMoved)) {
          const ids = moved.get(next)
          if (ids === undefined) moved.set(next, [endpoint.id])
          else ids.push(endpoint.id)
        }
        result.events += events.length
        if (entry.read.reset) result.resets++
      }
      result.endpoints += entry.chunk.endpoints.length
    }
    // In SQL: the client would set updated_at, which says when the partner changed it.
    for (const [next, ids] of moved) await tx.$executeRaw`UPDATE webhook_endpoints SET position = ${next}::jsonb WHERE id = ANY (${ids}::uuid[])`
    if (recovered.length > 0) await tx.$executeRaw`UPDATE webhook_endpoints SET dispatch_failures = 0, dispatch_paused_until = NULL, dispatch_error = NULL WHERE id = ANY (${recovered}::uuid[])`
    for (const { chunk, error } of failed) {
      // Recorded and left for later: every other chunk goes on being told meanwhile.
      const ids = chunk.endpoints.map(e => e.id)
      const failures = Math.max(...chunk.endpoints.map(e => e.dispatchFailures)) + 1
      const message = reason(error)
      await tx.$executeRaw`UPDATE webhook_endpoints SET dispatch_failures = dispatch_failures + 1, dispatch_paused_until = now() + ${pauseMs(failures)}::int * interval '1 millisecond', dispatch_error = ${message} WHERE id = ANY (${ids}::uuid[])`
      options.log?.warn({ err: error, organization: chunk.organizationId, endpoints: ids.length, failures }, `webhooks: reading the changes of ${ids.length} endpoint(s) failed (${failures} run(s) in a row); left out for ${pauseMs(failures) / 1000} s, the others go on`)
      result.failed += ids.length
    }
    if (leased.length > 0) {
      const endpoints = await leaseEndpoints(reader, leased.map(l => l.endpoint.id), options.leaseMs)
      for (const { endpoint, events, next } of leased) {
        const { lease, ...delivery } = endpoints.get(endpoint.id)!
        result.batches.push({ endpointId: endpoint.id, endpoint: delivery, events, next, lease, ...(lsn !== undefined ? { lsn } : {}) })
      }
    }
    return result
  }, { isolationLevel: PrismaNamespace.TransactionIsolationLevel.RepeatableRead, maxWait: 5000, timeout: 60_000 })
}
