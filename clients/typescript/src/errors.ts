import type { ApiError, ErrorDetail, InsufficientScope, UpgradeRequired } from './generated/index.js'

/** Any error body of the API: the shared shape and the fields of particular codes. */
type ErrorBody = Partial<ApiError> & Partial<Pick<UpgradeRequired, 'upgrade_url'>> & Partial<Pick<InsufficientScope, 'required_scope'>>

/**
 * An error answer of the API (4xx or 5xx), thrown by every method of `ScreeningClient`.
 * Switch on `code`, which is stable across releases; `message` is for people.
 */
export class ScreeningApiError extends Error {
  override readonly name = 'ScreeningApiError'
  /** The HTTP status. */
  readonly status: number
  /** Machine-readable code (`not_found`, `upgrade_required`, `insufficient_scope`, `rate_limited`…); `http_<status>` when the body was not the API's error shape (a proxy's page, for example). */
  readonly code: string
  /** The request's identifier, also in the service's log: quote it when reporting a problem. */
  readonly request_id: string | undefined
  /** On `upgrade_required` (403): the relative path of the billing page. */
  readonly upgrade_url: string | undefined
  /** On `insufficient_scope` (403): the scope the operation needs and the API key lacks (`jobs:read`, `analytics:read`, `webhooks:read`, `webhooks:write`). */
  readonly required_scope: string | undefined
  /** On `invalid_request` (400): each invalid value. */
  readonly details: ErrorDetail[] | undefined
  /** On 429 and 503: seconds to wait before retrying, from `Retry-After`. */
  readonly retry_after: number | undefined

  constructor (status: number, body: ErrorBody, headers?: Headers) {
    super(typeof body.error === 'string' ? body.error : `HTTP ${status}`)
    this.status = status
    this.code = typeof body.code === 'string' ? body.code : `http_${status}`
    this.request_id = body.request_id ?? headers?.get('x-request-id') ?? undefined
    this.upgrade_url = body.upgrade_url
    this.required_scope = body.required_scope
    this.details = body.details
    this.retry_after = headers !== undefined ? retryAfterSeconds(headers.get('retry-after')) : undefined
  }
}

/** `Retry-After` in seconds (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterSeconds (value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000))
}

/** The SDK's error for a failed response: the API's error body when it is one, the status otherwise. */
export function toScreeningApiError (body: unknown, response: Response): ScreeningApiError {
  const shaped = typeof body === 'object' && body !== null ? body as ErrorBody : {}
  return new ScreeningApiError(response.status, shaped, response.headers)
}
