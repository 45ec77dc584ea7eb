// Conditional requests for pollers: the API answers 304 with no body when a resource has not
// changed since the ETag the client sends back. This layer remembers the last 200 of each
// URL with its ETag, sends `If-None-Match`, and turns a 304 back into that 200, so that the
// caller always gets a body and the server computes and sends nothing new.

interface Stored { etag: string, body: ArrayBuffer, status: number, headers: [string, string][] }

const fromCache = new WeakSet<Response>()

/** Whether a response is the remembered body of an earlier 200, replayed on a 304 (nothing changed). */
export function isNotModified (response: Response | undefined): boolean {
  return response !== undefined && fromCache.has(response)
}

/** Remembered 200s by credential and URL (a URL's body depends on the caller), the least recently used dropped beyond `maxEntries`. */
export class EtagCache {
  private readonly entries = new Map<string, Stored>()
  constructor (readonly maxEntries = 1000) {}

  get size (): number { return this.entries.size }

  clear (): void { this.entries.clear() }

  /** A `fetch` that makes GETs conditional on this cache. */
  wrap (next: typeof fetch): typeof fetch {
    return async (input, init) => {
      const request = new Request(input, init)
      // A caller's own If-None-Match means it handles 304s itself.
      if (request.method !== 'GET' || request.headers.has('if-none-match')) return await next(request)
      const key = `${request.headers.get('authorization') ?? ''} ${request.url}`
      const stored = this.entries.get(key)
      if (stored !== undefined) request.headers.set('if-none-match', stored.etag)
      const response = await next(request)
      if (response.status === 304 && stored !== undefined) {
        this.entries.delete(key)
        this.entries.set(key, stored)
        const replay = new Response(stored.body.slice(0), { status: stored.status, headers: stored.headers })
        fromCache.add(replay)
        return replay
      }
      const etag = response.headers.get('etag')
      if (response.status === 200 && etag !== null) {
        this.remember(key, { etag, body: await response.clone().arrayBuffer(), status: 200, headers: [...response.headers] })
      } else if (response.status !== 304) {
        this.entries.delete(key)
      }
      return response
    }
  }

  private remember (key: string, stored: Stored): void {
    this.entries.delete(key)
    this.entries.set(key, stored)
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break
      this.entries.delete(oldest)
    }
  }
}
