import type { Server } from 'node:http'
import { LogController, type FastifyHttpOptions } from 'fastify'
import type { Config } from './config.js'
import { clientError, frameworkError } from './plugins/errors.js'
import { HEADERS_TIMEOUT_MS, MAX_HEADER_BYTES, MAX_PARAM_LENGTH, TIMEOUT_CHECK_INTERVAL_MS } from './limits.js'
import { requestId } from './plugins/request-id.js'
import { schemaController } from './validation.js'

/**
 * Fastify's constructor options: one module for the server and the tests, so that tests
 * run the server that production runs.
 */
export function serverOptions (config: Pick<Config, 'LOG_LEVEL' | 'LOG_FORMAT' | 'TRUST_PROXY_HOPS' | 'REQUEST_TIMEOUT_MS'>, logStream?: NodeJS.WritableStream): FastifyHttpOptions<Server> {
  const pretty = config.LOG_FORMAT === 'pretty' || (config.LOG_FORMAT === 'auto' && process.stdout.isTTY)
  return {
    logger: {
      level: config.LOG_LEVEL,
      // ISO 8601, as operators search by; pino's default is epoch milliseconds.
      timestamp: () => `,"time":"${new Date().toISOString()}"`,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
      ...(logStream !== undefined ? { stream: logStream } : pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
    },
    genReqId: requestId,
    // One line a request, written by the request-log plugin, in place of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // While closing, requests on open connections are answered, not refused (the draining
    // plugin); readiness alone reports 503, in the shared error shape.
    return503OnClosing: false,
    // Past this the response is a 503 whatever the database does (the error handler maps
    // FST_ERR_HANDLER_TIMEOUT); abandoned queries end at their own timeouts.
    handlerTimeout: config.REQUEST_TIMEOUT_MS,
    trustProxy: config.TRUST_PROXY_HOPS > 0 ? (_address: string, hop: number) => hop < config.TRUST_PROXY_HOPS : false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true },
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
    http: { maxHeaderSize: MAX_HEADER_BYTES, headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
    ajv: { customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: true, allErrors: true } },
    schemaController,
  }
}
