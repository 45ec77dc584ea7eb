import { Type, type Static } from '@sinclair/typebox'

export const ERROR_CODES = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'upgrade_required',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
  500: 'internal',
  503: 'unavailable',
} as const

export type ErrorStatus = keyof typeof ERROR_CODES
export type ErrorCode = typeof ERROR_CODES[ErrorStatus]

const errorFields = {
  error: Type.String({ description: 'Human-readable message. Do not parse it; use `code`.' }),
  code: Type.String({
    description: 'Machine-readable code, stable across releases. Known values: ' +
      [...new Set(Object.values(ERROR_CODES))].map(c => `\`${c}\``).join(', ') +
      '. Treat an unknown value like the HTTP status alone.',
  }),
  request_id: Type.String({ description: 'Identifier of this request, also in the `x-request-id` header and the service log.' }),
}

export const ErrorDetail = Type.Object({
  path: Type.String({ description: 'Where the invalid value is, e.g. `params/jobId` or `querystring/tz`.' }),
  message: Type.String(),
}, { $id: 'ErrorDetail', additionalProperties: false })

export const ErrorSchema = Type.Object({
  ...errorFields,
  details: Type.Optional(Type.Array(Type.Ref(ErrorDetail), { description: 'On `invalid_request`: each invalid value.' })),
}, {
  $id: 'Error',
  title: 'Error',
  description: 'Every error response has this shape.',
  additionalProperties: false,
})

export const UpgradeRequiredSchema = Type.Object({
  ...errorFields,
  upgrade_url: Type.String({ description: 'Relative path of the billing page of the dashboard.', examples: ['/dashboard/billing'] }),
}, {
  $id: 'UpgradeRequired',
  title: 'UpgradeRequired',
  description: 'The 403 of a Pro-only operation called on the free tier: the error shape plus `upgrade_url`.',
  additionalProperties: false,
})

export type ErrorBody = Static<typeof ErrorSchema>
export type UpgradeRequiredBody = Static<typeof UpgradeRequiredSchema>
