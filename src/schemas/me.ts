import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp, Uuid, Word } from './types.js'

export const MeSchema = Type.Object({
  user: Type.Object({
    id: Uuid(),
    email: Type.String({ format: 'email', maxLength: 320 }),
    name: Type.String({ maxLength: 200 }),
    created_at: Timestamp(),
  }, { additionalProperties: false }),
  organization: Type.Object({
    id: Uuid(),
    name: Type.String({ maxLength: 200 }),
  }, { additionalProperties: false }),
  subscription: Type.Object({
    plan: Word({ description: 'Known values: `free`, `pro`.', examples: ['pro'] }),
    status: Word({ description: 'Known values: `active`, `trialing`, `past_due`, `canceled`.', examples: ['active'] }),
    current_period_end: Nullable(Timestamp({ description: 'End of the paid period; null when there is none.' })),
  }, { additionalProperties: false }),
  entitlements: Type.Object({
    analytics: Type.Boolean({ description: 'Whether the job analytics operation is available now.' }),
    branding: Type.Boolean({ description: 'Whether custom branding (logo, color) is available now.' }),
  }, { additionalProperties: false, description: 'Computed at the time of the request: hide Pro features where false instead of provoking a 403.' }),
  scopes: Type.Array(Type.String({ maxLength: 64, pattern: '^[a-z_]+:[a-z_]+$', description: 'Known values: `jobs:read`, `analytics:read`.' }), {
    maxItems: 32,
    uniqueItems: true,
    description: 'What the API key of this request may do: the scope each operation names in its `security` requirement. An operation whose scope is missing here answers 403 `insufficient_scope`. A key made without a choice has every scope.',
    examples: [['jobs:read', 'analytics:read']],
  }),
}, {
  $id: 'Me',
  title: 'Me',
  description: 'The caller: user, organization, subscription and what the subscription allows now.',
  additionalProperties: false,
})

export type Me = Static<typeof MeSchema>
