import { Type, type Static } from '@sinclair/typebox'

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
const OTHER_CODES = [INSUFFICIENT_SCOPE] as const

/** Validation problems reported in one 400, at most. */
export const MAX_DETAILS = 20

export type ErrorStatus = keyof typeof ERROR_CODES
export type ErrorCode = typeof ERROR_CODES[ErrorStatus]

const errorFields = {
  error: Type.String({ maxLength: 1000, description: 'Human-readable message. Do not parse it; use `code`.' }),
  code: Type.String({
    maxLength: 64,
    pattern: '^[a-z_]+$',
    description: 'Machine-readable code, stable across releases. Known values: ' +
      [...new Set([...Object.values(ERROR_CODES), ...OTHER_CODES])].map(c => `\`${c}\``).join(', ') +
      '. Treat an unknown value like the HTTP status alone.',
  }),
  request_id: Type.String({ maxLength: 128, pattern: '^[A-Za-z0-9._:-]{1,128}$', description: 'Identifier of this request, also in the `x-request-id` header and the service log.' }),
}

export const ErrorDetail = Type.Object({
  path: Type.String({ maxLength: 200, description: 'Where the invalid value is, e.g. `params/jobId` or `querystring/tz`.' }),
  message: Type.String({ maxLength: 500 }),
}, { $id: 'ErrorDetail', additionalProperties: false })

export const ErrorSchema = Type.Object({
  ...errorFields,
  details: Type.Optional(Type.Array(Type.Ref(ErrorDetail), { maxItems: MAX_DETAILS, description: `On \`invalid_request\`: each invalid value (the first ${MAX_DETAILS}).` })),
}, {
  $id: 'ApiError',
  title: 'ApiError',
  description: 'Every error response has this shape.',
  additionalProperties: false,
})

export const UpgradeRequiredSchema = Type.Object({
  ...errorFields,
  code: Type.Literal('upgrade_required', { description: 'Always `upgrade_required`, so clients can switch on `code`.' }),
  upgrade_url: Type.String({ maxLength: 2048, description: 'Relative path of the billing page of the dashboard.', examples: ['/dashboard/billing'] }),
}, {
  $id: 'UpgradeRequired',
  title: 'UpgradeRequired',
  description: 'The 403 of a Pro-only operation called on the free tier: the error shape plus `upgrade_url`.',
  additionalProperties: false,
})

export const InsufficientScopeSchema = Type.Object({
  ...errorFields,
  code: Type.Literal(INSUFFICIENT_SCOPE, { description: 'Always `insufficient_scope`, so clients can switch on `code`.' }),
  required_scope: Type.String({
    maxLength: 64,
    pattern: '^[a-z_]+:[a-z_]+$',
    description: 'The scope the operation needs and the key lacks. Known values: `jobs:read`, `analytics:read`. Ask the organization for a key with it.',
    examples: ['analytics:read'],
  }),
}, {
  $id: 'InsufficientScope',
  title: 'InsufficientScope',
  description: 'The 403 of an operation whose scope the API key lacks (its `security` requirement names the scope): the error shape plus `required_scope`. Decided from the key alone, before the parameters, the plan and the job are looked at: it says nothing about the job.',
  additionalProperties: false,
})

export type ErrorBody = Static<typeof ErrorSchema>
export type UpgradeRequiredBody = Static<typeof UpgradeRequiredSchema>
export type InsufficientScopeBody = Static<typeof InsufficientScopeSchema>
