import type { ChangesPage } from '../changes/changes-page.js'
import { snapshotText } from '../changes/snapshot.js'
import type { Chunk, ChunkEndpoint } from './dispatch-candidates.js'
import type { ChunkRead } from './dispatch-read.js'
import { changeEventId, resetEventId, type WebhookEvent } from './events.js'

// The events a dispatcher run hands each endpoint of a chunk it read (src/webhooks/dispatch.ts).

/**
 * Each endpoint's events: a sync.reset when its position started over; else one event per
 * job (sent after every change this snapshot shows, it tells them all: the partner reads the
 * job then), named after the job's last change read, of the types the endpoint asked for.
 */
export function chunkEvents (chunk: Chunk, read: ChunkRead, seenAt: string): Array<{ endpoint: ChunkEndpoint, events: WebhookEvent[] }> {
  const { next } = read
  const last = read.reset || !chunk.allowed.jobs ? [] : [...lastPerJob(read.changes)]
  return chunk.endpoints.map(endpoint => {
    if (read.reset) return { endpoint, events: [{ id: resetEventId(endpoint.id, `${next.history}:${next.generation}:${snapshotText(next.since)}`), type: 'sync.reset', subject: endpoint.id, at: seenAt, attempt: 1 }] }
    const events: WebhookEvent[] = []
    for (const change of last) {
      const type = change.present ? 'job.updated' : 'job.deleted'
      if (endpoint.events.includes(type)) events.push({ id: changeEventId(endpoint.id, next, change.xid, change.jobId), type, subject: change.jobId, at: seenAt, attempt: 1 })
    }
    return { endpoint, events }
  })
}

/** Each job's last change, in the order of those last changes. */
function lastPerJob (changes: ChangesPage['changes']): Iterable<ChangesPage['changes'][number]> {
  const last = new Map<string, ChangesPage['changes'][number]>()
  for (const change of changes) { last.delete(change.jobId); last.set(change.jobId, change) }
  return last.values()
}
