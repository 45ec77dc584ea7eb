import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../errors.js'

// Every bound on what a request may carry, in one place; the OpenAPI document states them
// (414, 431, 408). The longest legitimate URL of this API is under 300 characters.

/** Path and query string together; longer is a 414. */
export const MAX_URL_LENGTH = 2048
/** The query string alone; longer is a 414. */
export const MAX_QUERY_LENGTH = 1024
/** One path segment, enforced by the router (server-options); longer is a 414. */
export const MAX_PARAM_LENGTH = 500
/** Request line and headers, enforced by Node's HTTP parser (server-options); more is a 431. */
export const MAX_HEADER_BYTES = 16_384
/** For the request line and headers to arrive, enforced by Node (server-options); then a 408. */
export const HEADERS_TIMEOUT_MS = 10_000
/** How often Node looks for connections past HEADERS_TIMEOUT_MS (its default, 30 s, would make it 10 to 40 s). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1000

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
}, { name: 'request-limits', dependencies: ['errors'] })
