import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { isDatabaseUnavailable } from '../db/errors.js'
import { ApiError, databaseUnavailable, invalidRequest } from '../errors.js'
import { ERROR_CODES, MAX_DETAILS, type ErrorStatus } from '../error-codes.js'
import { HEADERS_TIMEOUT_MS, MAX_HEADER_BYTES, MAX_PARAM_LENGTH } from '../limits.js'
import { uriTooLong } from './request-limits.js'

const isDocumentedStatus = (status: number): status is ErrorStatus => status in ERROR_CODES

/** Writes an ApiError as the shared error body. Every error response goes through here. */
export function sendApiError (request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.statusCode === 401) reply.header('www-authenticate', 'Bearer')
  request.refusal ??= error.code // for the request's log line, unless a hook said more
  // Also set here: errors raised by the router never reach the onSend hooks.
  reply.header('x-request-id', request.id)
  return reply
    .code(error.statusCode)
    .headers(error.headers)
    .send(error.body(request.id))
}

/** Maps any error thrown during a request to an ApiError; never leaks internals. */
export function toApiError (error: FastifyError | Error, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error
  const fastifyError = error as FastifyError
  if (fastifyError.validation !== undefined) {
    const context = fastifyError.validationContext ?? 'request'
    const details = fastifyError.validation.slice(0, MAX_DETAILS).map(v => ({
      path: `${context}${v.instancePath === '' && typeof v.params?.missingProperty === 'string' ? `/${v.params.missingProperty}` : v.instancePath}`,
      message: v.message ?? 'is invalid',
    }))
    return invalidRequest(details)
  }
  if (fastifyError.code === 'FST_ERR_HANDLER_TIMEOUT') {
    request.log.warn({ err: error }, 'request timed out (REQUEST_TIMEOUT_MS)')
    return databaseUnavailable()
  }
  const status = fastifyError.statusCode
  if (status !== undefined && status >= 400 && status < 500 && isDocumentedStatus(status)) {
    return new ApiError(status, fastifyError.message, status === 400 ? { details: [] } : {})
  }
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'database unavailable')
    return databaseUnavailable()
  }
  request.log.error({ err: error }, 'unhandled error')
  return new ApiError(500, 'Internal server error')
}

/**
 * Errors raised by the router before a route is found (a malformed percent-encoding, a path
 * segment over the router's limit): same shape as every other error.
 */
export function frameworkError (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = error.code === 'FST_ERR_MAX_PARAM_LENGTH'
    ? uriTooLong('a path segment', MAX_PARAM_LENGTH)
    : error.code === 'FST_ERR_BAD_URL'
      ? invalidRequest([{ path: 'url', message: 'is not valid percent-encoded UTF-8' }])
      : toApiError(error, request)
  sendApiError(request, reply, apiError)
}

/** What Node's HTTP parser refuses before there is a request (Fastify's clientErrorHandler), as an ApiError. */
function clientErrorToApiError (error: { code?: string }): ApiError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW': return new ApiError(431, `Request Header Fields Too Large: the request line and headers may take ${MAX_HEADER_BYTES} bytes`)
    case 'ERR_HTTP_REQUEST_TIMEOUT': return new ApiError(408, `Request Timeout: the request line and headers did not arrive within ${HEADERS_TIMEOUT_MS / 1000} s`)
    default: return new ApiError(400, 'Bad Request: not a valid HTTP/1.1 request', { details: [] })
  }
}

/**
 * Fastify's clientErrorHandler: the same error shape on the raw socket, since no request or
 * reply exists yet; then the connection is closed, as Node does. Not written when a response
 * is already under way on the connection (it would corrupt that one). Logged without the
 * error object: Node attaches the raw bytes received to it, credentials included.
 */
export function clientError (this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const apiError = clientErrorToApiError(error)
  const id = randomUUID()
  this.log.debug({ code: error.code, reqId: id, statusCode: apiError.statusCode }, 'request refused by the HTTP parser')
  const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true
  if (socket.writable && !inProgress) {
    const body = JSON.stringify(apiError.body(id))
    socket.write([
      `HTTP/1.1 ${apiError.statusCode} ${STATUS_CODES[apiError.statusCode]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${id}`,
      'X-Content-Type-Options: nosniff',
      'Connection: close',
      '',
      body,
    ].join('\r\n'))
  }
  socket.destroy()
}

export default fp(async function errorsPlugin (app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError, request, reply) => sendApiError(request, reply, toApiError(error, request)))
  app.setNotFoundHandler((request, reply) => sendApiError(request, reply, new ApiError(404, 'Route not found')))
}, { name: 'errors' })
