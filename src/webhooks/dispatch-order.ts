import type { Chunk } from './dispatch-candidates.js'

// Which chunks a dispatcher run reads first, and how many changes each (dispatch.ts): a round
// robin by organization, then by chunk in each, kept by this process from run to run.

/** Changes one page reads at most; pages read powers of two (a statement text each). */
const MOST_PER_PAGE = 4096

/**
 * The round robin of this process's runs: the last organization read (the next run starts
 * after it), and in each organization cut short, its last chunk read (its next read starts
 * after it). So one organization's chunks never hold the others back.
 */
let lastOrganization = ''
const lastChunk = new Map<string, string>()

/** Changes for a chunk of `size` endpoints given `share` events: at least one, a power of two. */
export function pageLimit (share: number, size: number): number {
  const changes = Math.max(1, Math.min(MOST_PER_PAGE, Math.floor(share / size)))
  return 2 ** Math.floor(Math.log2(changes))
}

/** `items` from the first after `last` (by `key`), round the end and back. */
function after<T> (items: T[], key: (item: T) => string, last: string | undefined): T[] {
  const start = last === undefined ? 0 : Math.max(0, items.findIndex(item => key(item) > last))
  return [...items.slice(start), ...items.slice(0, start)]
}

/** The chunks by organization, each in round-robin order: organizations, then chunks in each. */
export function byOrganization (chunks: Chunk[]): Chunk[][] {
  const organizations = new Map<string, Chunk[]>()
  for (const chunk of chunks) {
    const theirs = organizations.get(chunk.organizationId)
    if (theirs === undefined) organizations.set(chunk.organizationId, [chunk])
    else theirs.push(chunk)
  }
  for (const id of lastChunk.keys()) if (!organizations.has(id)) lastChunk.delete(id)
  const ordered = after([...organizations.keys()].sort(), id => id, lastOrganization)
  return ordered.map(id => after(organizations.get(id)!.sort((a, b) => a.key < b.key ? -1 : 1), c => c.key, lastChunk.get(id)))
}

/** The run read `chunk`: the next run starts after its organization, and that organization after it. */
export function readFrom (chunk: Chunk): void {
  lastOrganization = chunk.organizationId
  lastChunk.set(chunk.organizationId, chunk.key)
}
