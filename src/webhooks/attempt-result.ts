// How a webhook attempt went, as the egress guard reports it (egress.ts) and the sender
// records and schedules it (deliverer.ts): the status, the Retry-After it asked for, or why
// there was no answer.

/** How an attempt went: the status the endpoint answered, or why there was none. */
export interface AttemptResult { status?: number, retryAfterMs?: number, error?: string, durationMs: number }

/** A header's one value (the first, when it came more than once). */
export const single = (value: string | string[] | undefined): string | undefined => Array.isArray(value) ? value[0] : value

/** The longest Retry-After honoured: a day (an endpoint cannot push its events past the retry schedule's reach, nor past a date's range). */
export const MAX_RETRY_AFTER_MS = 86_400_000

/** Retry-After in milliseconds (seconds, or an HTTP date), at most a day; undefined if none or unreadable. */
export function retryAfter (value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  // Delay-seconds, or an HTTP date (it names a weekday and a month); anything else is ignored.
  const ms = /^\d{1,15}$/.test(trimmed) ? Number(trimmed) * 1000 : /^\d+$/.test(trimmed) ? MAX_RETRY_AFTER_MS : /[A-Za-z]/.test(trimmed) ? Date.parse(trimmed) - Date.now() : NaN
  return Number.isFinite(ms) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)) : undefined
}

/** The endpoint answered 2xx. */
export const delivered = (result: AttemptResult): boolean => result.status !== undefined && result.status >= 200 && result.status < 300

/** Why an attempt was not delivered, as its record says; null when it was. */
export const errorOf = (result: AttemptResult): string | null => result.error ?? (result.status === undefined || delivered(result)
  ? null
  : result.status >= 300 && result.status < 400 ? `redirect (${result.status}), not followed` : `status ${result.status}`)
