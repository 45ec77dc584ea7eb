import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError } from '../errors.js'
import { MAX_QUERY_LENGTH, MAX_URL_LENGTH } from '../limits.js'

// The URL bounds of src/limits.ts, checked before authentication (the others are Node's and
// the router's: server-options.ts).

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
