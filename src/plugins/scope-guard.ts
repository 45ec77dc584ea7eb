import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { isScope, type Scope } from '../auth/scopes.js'
import { insufficientScope } from '../errors.js'

/**
 * The scopes an operation's OpenAPI security requirement names (`[{ bearerAuth: ['jobs:read'] }]`),
 * which are the scopes it enforces: the document cannot say one thing and the service do
 * another. Only one requirement, of bearerAuth, is understood; anything else is refused at
 * start-up rather than enforced wrongly.
 */
export function requiredScopes (route: Pick<RouteOptions, 'url' | 'schema'>): Scope[] {
  const security = (route.schema as { security?: Array<Record<string, string[]>> } | undefined)?.security
  if (security === undefined) return []
  if (security.length !== 1 || Object.keys(security[0]!).join() !== 'bearerAuth') {
    throw new Error(`${route.url}: only one security requirement, of bearerAuth, is enforced; found ${JSON.stringify(security)}`)
  }
  const names = security[0]!.bearerAuth!
  const unknown = names.filter(name => !isScope(name))
  if (unknown.length > 0) throw new Error(`${route.url}: unknown scope(s) ${unknown.join(', ')} in its security requirement`)
  return names as Scope[]
}

/**
 * The check a route needs, or undefined when it names no scope. A route that names a scope
 * but documents no 403 is refused: its clients would not know the answer they may get.
 */
export function scopeGuardFor (route: Pick<RouteOptions, 'url' | 'schema'>): ((request: FastifyRequest) => Promise<void>) | undefined {
  const scopes = requiredScopes(route)
  if (scopes.length === 0) return undefined
  if ((route.schema?.response as Record<string, unknown> | undefined)?.['403'] === undefined) {
    throw new Error(`${route.url} requires ${scopes.join(', ')} but documents no 403`)
  }
  return async function scopeGuard (request: FastifyRequest): Promise<void> {
    const missing = scopes.find(scope => !request.caller.scopes.includes(scope))
    if (missing !== undefined) throw insufficientScope(missing)
  }
}

/**
 * Gives each route that names scopes a check that the caller's key has them: a 403
 * `insufficient_scope` otherwise. The check runs right after authentication (a route's
 * onRequest hooks come after its context's), so before validation, the plan guard and any
 * query: it depends on the key alone and is the same whatever the request asks for.
 */
export default fp(async function scopeGuardPlugin (app: FastifyInstance) {
  app.addHook('onRoute', route => {
    const guard = scopeGuardFor(route)
    if (guard === undefined) return
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]
    route.onRequest = [...existing, guard]
  })
}, { name: 'scope-guard', dependencies: ['auth'] })
