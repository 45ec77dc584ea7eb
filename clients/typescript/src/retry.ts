import { retryAfterSeconds } from './errors.js'

export interface RetryOptions {
  /** Attempts in all, the first included. Default 3. */
  maxAttempts?: number
  /** Longest time from the first attempt to the last one's start; a retry that would start later is not made. Default 30,000 ms. */
  maxElapsedMs?: number
  /** Wait when the answer has no `Retry-After`, doubled at each retry. Default 500 ms. */
  baseDelayMs?: number
}

// Reads are safe to repeat, and so is a POST with an Idempotency-Key (the server answers a
// retry with the first answer, doing nothing more); any other write (PATCH, DELETE) is never
// retried, so none is made twice.
const IDEMPOTENT = new Set(['GET', 'HEAD'])
const repeatable = (request: Request): boolean => IDEMPOTENT.has(request.method) || (request.method === 'POST' && request.headers.has('idempotency-key'))
const RETRYABLE = new Set([429, 503])

const sleep = async (ms: number, signal: AbortSignal | null): Promise<void> => await new Promise((resolve, reject) => {
  if (signal?.aborted === true) { reject(signal.reason); return }
  const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
  const onAbort = (): void => { clearTimeout(timer); reject(signal?.reason) }
  signal?.addEventListener('abort', onAbort, { once: true })
})

/**
 * A `fetch` that repeats a GET (or a POST with an Idempotency-Key, with the same key) answered
 * 429 (rate limited) or 503 (database unavailable)
 * after the wait the answer's `Retry-After` asks for, within the bounds of `options`. The
 * last answer is returned as it is when the attempts or the time run out.
 */
export function retryingFetch (next: typeof fetch, options: RetryOptions = {}): typeof fetch {
  const maxAttempts = options.maxAttempts ?? 3
  const maxElapsedMs = options.maxElapsedMs ?? 30_000
  const baseDelayMs = options.baseDelayMs ?? 500
  return async (input, init) => {
    const request = new Request(input, init)
    if (!repeatable(request)) return await next(request)
    const started = Date.now()
    for (let attempt = 1; ; attempt++) {
      const response = await next(request.clone())
      if (!RETRYABLE.has(response.status) || attempt >= maxAttempts) return response
      const retryAfter = retryAfterSeconds(response.headers.get('retry-after'))
      const waitMs = retryAfter !== undefined ? retryAfter * 1000 : baseDelayMs * 2 ** (attempt - 1)
      if (Date.now() - started + waitMs > maxElapsedMs) return response
      await response.body?.cancel()
      await sleep(waitMs, request.signal)
    }
  }
}
