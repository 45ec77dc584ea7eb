import { clientReader } from '../db/sql-reader.js'
import type { Prisma as PrismaNamespace } from '../generated/prisma/client.js'
import { historyId } from '../changes/history.js'
import { changesPage, type ChangesPage } from '../changes/changes-page.js'
import { quietSince } from '../changes/quiet.js'
import { bounded, intersect, parseSnapshot } from '../changes/snapshot.js'
import type { Allowed, Chunk } from './dispatch-candidates.js'
import type { EndpointPosition } from './position.js'

// What a dispatcher run reads for a chunk of endpoints (src/webhooks/dispatch.ts): its changes
// since its position, one page of the change log, as a sync reader would (src/jobs/sync/);
// or, for many chunks in one statement, that there is nothing to read.

type Tx = PrismaNamespace.TransactionClient

/** What a chunk is told this run: its changes, where its position goes, and whether it starts over. */
export interface ChunkRead { changes: ChangesPage['changes'], next: EndpointPosition, reset: boolean }

/** The point a page's statement saw: where a position starts over. */
const pointOf = (page: ChangesPage, allowed: Allowed, at: number): EndpointPosition => ({
  since: bounded(parseSnapshot(page.snapshot)!),
  generation: page.generation,
  history: historyId(page.history),
  analytics: allowed.analytics,
  jobs: allowed.jobs,
  at,
})

/** A position that cannot be read (edited by hand, or whose reads kept failing) starts over like an expired one. */
const START_OVER: EndpointPosition = { since: { xmin: 1n, xmax: 1n, xip: [] }, generation: -1, history: '', analytics: true, jobs: true }

/**
 * What changed since the chunk's position (at most `most` changes: one page of the change
 * log, in its order) and where the position goes next: the intersection of what this page
 * and the earlier ones of a position cut short saw, or, cut short again, where the next run
 * resumes. `reset`: the position can no longer be answered exactly (expired, another database
 * history, or the key may now read what earlier runs skipped).
 */
export async function readChanges (tx: Tx, chunk: Chunk, most: number, at: number): Promise<ChunkRead> {
  const position = chunk.position ?? START_OVER
  const { allowed } = chunk
  const after = position.resume?.after
  const page = await changesPage(clientReader(tx), chunk.organizationId, { since: { seen: position.since, generation: position.generation }, limit: most, analytics: allowed.analytics, ...(after !== undefined ? { after } : {}) })
  const here = parseSnapshot(page.snapshot)!
  const skippedBefore = (allowed.analytics && !position.analytics) || (allowed.jobs && !position.jobs)
  if (page.expired || historyId(page.history) !== position.history || skippedBefore) return { changes: [], next: pointOf(page, allowed, at), reset: true }
  const seen = position.resume === undefined ? here : intersect(position.resume.seen, here)
  const told = { analytics: position.analytics && allowed.analytics, jobs: position.jobs && allowed.jobs }
  if (page.nextAfter === undefined) return { changes: page.changes, next: { since: bounded(seen), generation: position.generation, history: position.history, ...told, at }, reset: false }
  return { changes: page.changes, next: { ...position, ...told, resume: { after: page.nextAfter, seen } }, reset: false }
}

/** A chunk whose position is plain: not cut short, readable, and not allowed more than it was told. */
const plain = (chunk: Chunk): boolean => chunk.position !== undefined && chunk.position.resume === undefined &&
  !(chunk.allowed.analytics && !chunk.position.analytics) && !(chunk.allowed.jobs && !chunk.position.jobs)

/**
 * The chunks with nothing to read (quietSince), and the position each may move to: this
 * transaction's snapshot, as a page would have given. Only plain positions; the others are
 * read by pages. An idle run so costs one statement, not a page per chunk.
 */
export async function quietChunks (tx: Tx, chunks: Chunk[], at: number): Promise<Map<Chunk, EndpointPosition>> {
  const probed = chunks.filter(plain)
  const quiet = new Map<Chunk, EndpointPosition>()
  if (probed.length === 0) return quiet
  const found = await quietSince(clientReader(tx), probed.map(c => ({ organizationId: c.organizationId, since: c.position!.since })))
  const since = bounded(parseSnapshot(found.snapshot)!)
  probed.forEach((chunk, i) => {
    const position = chunk.position!
    if (found.quiet[i] !== true || found.generation !== position.generation || historyId(found.history!) !== position.history) return
    quiet.set(chunk, { since, generation: position.generation, history: position.history, analytics: position.analytics && chunk.allowed.analytics, jobs: position.jobs && chunk.allowed.jobs, at })
  })
  return quiet
}

/**
 * `read` in a savepoint of the run's transaction: when it fails, what it did is undone and
 * the run goes on with the other chunks (the error is returned, for the chunk's record).
 * A failure the savepoint cannot undo (the connection lost) fails the run.
 */
export async function isolated<T> (tx: Tx, read: () => Promise<T>): Promise<{ value: T } | { error: unknown }> {
  await tx.$executeRawUnsafe('SAVEPOINT dispatch_chunk')
  try {
    const value = await read()
    await tx.$executeRawUnsafe('RELEASE SAVEPOINT dispatch_chunk')
    return { value }
  } catch (error) {
    await tx.$executeRawUnsafe('ROLLBACK TO SAVEPOINT dispatch_chunk')
    return { error }
  }
}
