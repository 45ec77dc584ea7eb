import { Type } from '@sinclair/typebox'
import { KNOWN_CODES, MAX_DETAILS, INSUFFICIENT_SCOPE } from '../error-codes.js'

const errorFields = {
  error: Type.String({ maxLength: 1000, description: 'Human-readable message. Do not parse it; use `code`.' }),
  code: Type.String({
    maxLength: 64,
    pattern: '^[a-z_]+$',
    description: 'Machine-readable code, stable across releases. Known values: ' +
      KNOWN_CODES.map(c => `\`${c}\``).join(', ') +
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
