import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { isScope, type Scope } from '../auth/scopes.js'
import { insufficientScope } from '../errors.js'

type RouteSecurity = Pick<RouteOptions, 'url' | 'schema'> & { method?: RouteOptions['method'] }

/** `GET /api/me`, for messages. */
const routeName = (route: RouteSecurity): string => `${route.method === undefined ? '' : `${[route.method].flat().join(',')} `}${route.url}`

/**
 * Whether a path is under /api, where every route answers an organization's data and so must
 * be authenticated and name its scopes. Read case-insensitively and with repeated slashes
 * folded, so that a spelling the router might be configured to equate is never left out.
 */
export function isApiPath (url: string): boolean {
  const path = url.toLowerCase().replace(/\/{2,}/g, '/')
  return path === '/api' || path.startsWith('/api/')
}

/**
 * The scopes an operation's OpenAPI security requirement names (`[{ bearerAuth: ['jobs:read'] }]`),
 * which are the scopes it enforces: the document cannot say one thing and the service do
 * another. `[{ bearerAuth: [] }]` is a valid key and no scope (GET /api/me). A route that
 * declares no requirement is refused, as is anything but one requirement of bearerAuth:
 * refused at start-up rather than served without a scope, or enforced wrongly.
 */
export function requiredScopes (route: RouteSecurity): Scope[] {
  const security = (route.schema as { security?: Array<Record<string, string[]>> } | undefined)?.security
  if (security === undefined) {
    throw new Error(`${routeName(route)}: an /api route must declare its security requirement (\`security: [{ bearerAuth: [<scopes>] }]\`, \`[]\` for a valid key and no scope); it declares none`)
  }
  if (security.length !== 1 || Object.keys(security[0]!).join() !== 'bearerAuth') {
    throw new Error(`${routeName(route)}: only one security requirement, of bearerAuth, is enforced; found ${JSON.stringify(security)}`)
  }
  const names = security[0]!.bearerAuth!
  const unknown = names.filter(name => !isScope(name))
  if (unknown.length > 0) throw new Error(`${routeName(route)}: unknown scope(s) ${unknown.join(', ')} in its security requirement`)
  return names as Scope[]
}

/**
 * The check a route needs, or undefined when it names no scope (a valid key is enough). A
 * route that names a scope but documents no 403 is refused: its clients would not know the
 * answer they may get.
 */
export function scopeGuardFor (route: RouteSecurity): ((request: FastifyRequest) => Promise<void>) | undefined {
  const scopes = requiredScopes(route)
  if (scopes.length === 0) return undefined
  if ((route.schema?.response as Record<string, unknown> | undefined)?.['403'] === undefined) {
    throw new Error(`${routeName(route)} requires ${scopes.join(', ')} but documents no 403`)
  }
  return async function scopeGuard (request: FastifyRequest): Promise<void> {
    const missing = scopes.find(scope => !request.caller.scopes.includes(scope))
    if (missing !== undefined) throw insufficientScope(missing)
  }
}

/** Set on the options of each route the scope guard has seen, i.e. routes behind the auth hook. */
const GUARDED = Symbol('scope-guard: behind authentication')

/**
 * Gives each route of its context (the /api context, right after the auth plugin) a check
 * that the caller's key has the scopes the route names: a 403 `insufficient_scope`
 * otherwise. The check runs right after authentication (a route's onRequest hooks come after
 * its context's), so before validation, the plan guard and any query: it depends on the key
 * alone and is the same whatever the request asks for. A route of this context that declares
 * no security stops the service at start-up (requiredScopes).
 */
export default fp(async function scopeGuardPlugin (app: FastifyInstance) {
  app.addHook('onRoute', route => {
    const guard = scopeGuardFor(route)
    Object.defineProperty(route, GUARDED, { value: true })
    if (guard === undefined) return
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]
    route.onRequest = [...existing, guard]
  })
}, { name: 'scope-guard', dependencies: ['auth'] })

/**
 * Registered first, at the root: every route whose path is under /api, wherever it was
 * registered, must have been seen by the scope guard (so it is behind the auth hook and
 * declares its security), or the app does not start (ready() fails naming the routes). A
 * route registered under /api in another context would otherwise be served with no key at
 * all, and the guard, being encapsulated, would never see it.
 */
export const apiRoutesAudit = fp(async function apiRoutesAudit (app: FastifyInstance) {
  const apiRoutes: RouteOptions[] = []
  app.addHook('onRoute', route => { if (isApiPath(route.url)) apiRoutes.push(route) })
  app.addHook('onReady', async () => {
    const outside = apiRoutes.filter(route => (route as { [GUARDED]?: boolean })[GUARDED] !== true)
    if (outside.length > 0) {
      throw new Error(`${outside.map(routeName).join('; ')}: /api route(s) registered outside the authenticated /api context (no API key would be checked); refusing to start`)
    }
  })
}, { name: 'api-routes-audit' })
