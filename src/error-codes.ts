// The error codes of the API, by status: what every error body's `code` may be. Below both the
// errors thrown (errors.ts) and their schema in the document (schemas/error.ts).

export const ERROR_CODES = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'upgrade_required',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  410: 'sync_token_expired',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
  500: 'internal',
  503: 'unavailable',
} as const

/** Codes beyond the one of each status: a 403 is `upgrade_required` or `insufficient_scope`. */
export const INSUFFICIENT_SCOPE = 'insufficient_scope'
/** Every code an error body may carry. */
export const KNOWN_CODES = [...new Set([...Object.values(ERROR_CODES), INSUFFICIENT_SCOPE])]

/** Validation problems reported in one 400, at most. */
export const MAX_DETAILS = 20

export type ErrorStatus = keyof typeof ERROR_CODES
export type ErrorCode = typeof ERROR_CODES[ErrorStatus]
