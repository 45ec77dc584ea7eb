import { ERROR_CODES, INSUFFICIENT_SCOPE, type ErrorStatus } from './error-codes.js'

/**
 * An error with a documented status and code. Thrown anywhere in a request; the error
 * handler turns it into the shared error body.
 */
export class ApiError extends Error {
  readonly code: string
  constructor (
    readonly statusCode: ErrorStatus,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
    code: string = ERROR_CODES[statusCode]
  ) {
    super(message)
    this.code = code
  }

  /** The shared error body. */
  body (requestId: string): Record<string, unknown> {
    return { error: this.message, code: this.code, request_id: requestId, ...this.extra }
  }
}

/** A sync token older than the change log kept: the partner walks the list again. */
export const syncTokenExpired = (): ApiError => new ApiError(410, 'This sync token has expired: list the jobs again from the first page to get a new one.')

export const jobNotFound = (): ApiError => new ApiError(404, 'Job not found')

/** A 403 `insufficient_scope`: the key may not call this operation, whatever it asks. */
export const insufficientScope = (scope: string): ApiError =>
  new ApiError(403, `This API key lacks the scope \`${scope}\` that the operation requires.`, { required_scope: scope }, {}, INSUFFICIENT_SCOPE)

/** The database is unreachable, overloaded or timed out: the client may retry. */
export const databaseUnavailable = (): ApiError => new ApiError(503, 'Service unavailable, retry later', {}, { 'retry-after': '5' })

/** This instance is closing: another one (or this one, restarted) will answer. */
export const shuttingDown = (): ApiError => new ApiError(503, 'Service unavailable, retry later: this instance is shutting down', {}, { 'retry-after': '1' })

/** A 400 `invalid_request`: each problem in `details`, summarized in the message. */
export function invalidRequest (details: Array<{ path: string, message: string }>): ApiError {
  return new ApiError(400, `Invalid request: ${details.map(d => `${d.path} ${d.message}`).join('; ')}`.slice(0, 1000), { details })
}
