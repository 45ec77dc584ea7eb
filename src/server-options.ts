import type { FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'
import { frameworkError, MAX_PARAM_LENGTH } from './plugins/errors.js'
import { requestId } from './plugins/request-id.js'

/**
 * Fastify's constructor options: one module for the server and the tests, so that tests
 * run the server that production runs.
 */
export function serverOptions (config: Pick<Config, 'LOG_LEVEL' | 'TRUST_PROXY_HOPS'>, logStream?: NodeJS.WritableStream): FastifyServerOptions {
  return {
    logger: {
      level: config.LOG_LEVEL,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
      ...(logStream !== undefined ? { stream: logStream } : {}),
    },
    genReqId: requestId,
    return503OnClosing: true,
    trustProxy: config.TRUST_PROXY_HOPS > 0 ? (_address: string, hop: number) => hop < config.TRUST_PROXY_HOPS : false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true },
    frameworkErrors: frameworkError,
    ajv: { customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: true, allErrors: true } },
  }
}
