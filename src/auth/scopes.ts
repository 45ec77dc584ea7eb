/**
 * What an API key may do. Each operation that reads an organization's data names the one
 * scope it needs (in its OpenAPI security requirement, which the auth plugin enforces);
 * `GET /api/me` needs none. A new scope goes here, in the CHECK of `api_keys.scopes` (a
 * migration) and on the operations it guards.
 */
export const SCOPES = ['jobs:read', 'analytics:read', 'webhooks:read', 'webhooks:write'] as const
export type Scope = typeof SCOPES[number]

/** What each scope allows, as the OpenAPI document's bearer scheme lists them (`x-scopes`). */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'jobs:read': 'List the organization\'s jobs and get a job (GET /api/jobs, GET /api/jobs/{jobId}).',
  'analytics:read': 'Get a job\'s analytics, or many jobs\' in one call (GET /api/jobs/{jobId}/analytics, GET /api/analytics/jobs; Pro plan).',
  'webhooks:read': 'List the organization\'s webhook endpoints and their deliveries (GET /api/webhook_endpoints…).',
  'webhooks:write': 'Create, change, delete and rotate webhook endpoints, redeliver and recover events (POST, PATCH, DELETE /api/webhook_endpoints…). An endpoint is told what the key that made it may read.',
}

/**
 * The stored `scopes` of a key that may do everything: every scope there is, including any
 * added later, as a key could before scopes existed. A key restricted to every current scope
 * is stored as that list and does not gain a future one.
 */
export const EVERY_SCOPE = '*'

export const isScope = (name: string): name is Scope => (SCOPES as readonly string[]).includes(name)

/** The scopes a key has now, from its stored list. */
export function grantedScopes (stored: readonly string[]): Scope[] {
  return stored.includes(EVERY_SCOPE) ? [...SCOPES] : SCOPES.filter(scope => stored.includes(scope))
}

/**
 * An operator's list (`jobs:read,analytics:read`, or `all` for every scope) as it is stored,
 * or why it is refused. Duplicates are dropped; the order is SCOPES'.
 */
export function parseScopeList (text: string): { scopes: string[] } | { error: string } {
  const names = text.split(',').map(name => name.trim()).filter(name => name !== '')
  const every = names.filter(name => name === 'all' || name === EVERY_SCOPE)
  if (every.length > 0) return names.length === every.length ? { scopes: [EVERY_SCOPE] } : { error: '`all` stands alone: give it, or a list of scopes' }
  const unknown = names.filter(name => !isScope(name))
  if (unknown.length > 0) return { error: `unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.map(n => JSON.stringify(n)).join(', ')}: known scopes are ${SCOPES.join(', ')} (or all)` }
  if (names.length === 0) return { error: `at least one scope is needed: ${SCOPES.join(', ')} (or all)` }
  return { scopes: SCOPES.filter(scope => names.includes(scope)) }
}
