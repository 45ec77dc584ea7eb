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
  409: 'conflict',
  410: 'sync_token_expired',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  422: 'idempotency_key_reused',
  429: 'rate_limited',
  431: 'headers_too_large',
  500: 'internal',
  503: 'unavailable',
} as const

/** Codes beyond the one of each status: a 403 is `upgrade_required` or `insufficient_scope`. */
export const INSUFFICIENT_SCOPE = 'insufficient_scope'
/** A 409's codes (webhook endpoints): why the request conflicts with what is there. */
export const CONFLICT_CODES = {
  /** The organization has as many endpoints as it may (WEBHOOK_ENDPOINTS_MAX). */
  endpointLimit: 'endpoint_limit_reached',
  /** An operator disabled the endpoint: only an operator enables it again. */
  disabledByOperator: 'disabled_by_operator',
  /** A request with the same Idempotency-Key is still being answered. */
  idempotencyKeyInUse: 'idempotency_key_in_use',
} as const
/** Every code an error body may carry. */
export const KNOWN_CODES = [...new Set([...Object.values(ERROR_CODES), INSUFFICIENT_SCOPE, ...Object.values(CONFLICT_CODES)])]

/** Validation problems reported in one 400, at most. */
export const MAX_DETAILS = 20

export type ErrorStatus = keyof typeof ERROR_CODES
