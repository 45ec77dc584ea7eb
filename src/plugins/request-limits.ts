import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError, invalidRequest } from '../errors.js'
import { MAX_QUERY_LENGTH, MAX_URL_LENGTH } from '../limits.js'

// The URL bounds of src/limits.ts, checked before authentication (the others are Node's and
// the router's: server-options.ts); and what Ajv's coercion lets through its own bounds.

/** Counted as sent, percent-encoded: `%C3%A9` is 6 characters. */
export const uriTooLong = (what: string, max: number): ApiError => new ApiError(414, `URI Too Long: ${what} is longer than ${max} characters`)

/** The URL bounds, checked before authentication: an absurd request costs no query. */
export default fp(async function requestLimitsPlugin (app: FastifyInstance) {
  app.addHook('onRequest', async (request) => {
    const { url } = request
    if (url.length > MAX_URL_LENGTH) throw uriTooLong('the URL', MAX_URL_LENGTH)
    const query = url.indexOf('?')
    if (query !== -1 && url.length - query - 1 > MAX_QUERY_LENGTH) throw uriTooLong('the query string', MAX_QUERY_LENGTH)
  })
  // Ajv coerces a query's text to an integer with Number(): 0x10, 0b11, 1e1 and " 5" would
  // pass. Integers in a query string are decimal digits, checked before Ajv coerces them, on
  // the routes that take one (the others pay nothing).
  app.addHook('onRoute', route => {
    const names = integerParameters(route.schema?.querystring)
    if (names.length === 0) return
    const existing = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation]
    route.preValidation = [...existing, async (request: FastifyRequest) => {
      const found = nonDecimal(names, request.query)
      if (found !== undefined) throw invalidRequest([{ path: found.path, message: Number.isFinite(Number(found.value)) ? 'must be an integer written in decimal digits' : 'must be a finite number' }])
    }]
  })
  // Ajv coerces "1e309" or "Infinity" to a number and then skips `maximum` and `integer`
  // (they test finite numbers only): refused here for every route, whatever its schema.
  app.addHook('preHandler', async (request) => {
    const path = nonFinite(request.params, 'params') ?? nonFinite(request.query, 'querystring') ?? nonFinite(request.body, 'body')
    if (path !== undefined) throw invalidRequest([{ path, message: 'must be a finite number' }])
  })
}, { name: 'request-limits', dependencies: ['errors'] })

/** The path of the first non-finite number in a validated value (an object), if any. */
function nonFinite (value: unknown, path: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined
  for (const key in value) {
    const inner = (value as Record<string, unknown>)[key]
    if (typeof inner === 'number' ? !Number.isFinite(inner) : typeof inner === 'object') {
      const found = typeof inner === 'number' ? `${path}/${key}` : nonFinite(inner, `${path}/${key}`)
      if (found !== undefined) return found
    }
  }
  return undefined
}

const DECIMAL = /^-?[0-9]+$/

/** The query parameters a route's schema types as integers. */
function integerParameters (schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {}
  return Object.entries(properties).filter(([, property]) => property.type === 'integer').map(([name]) => name)
}

/** The first of `names` in `query` whose text is not decimal, if any. */
function nonDecimal (names: string[], query: unknown): { path: string, value: unknown } | undefined {
  if (query === null || typeof query !== 'object') return undefined
  for (const name of names) {
    const given = (query as Record<string, unknown>)[name]
    if (given === undefined) continue
    const value = [given].flat().find(v => typeof v !== 'string' || !DECIMAL.test(v))
    if (value !== undefined) return { path: `querystring/${name}`, value }
  }
  return undefined
}
