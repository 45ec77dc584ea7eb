// One rung of the plugin ladder (bench/plugins/run.ts): Fastify with the service's own
// constructor options and its cross-cutting plugins up to rung PLUGINS (0: none), answering a
// constant Job body as the service's route does (response schema, same JSON). No database.
import Fastify from 'fastify'
import { loadConfig } from '../../src/config.js'
import cachingPlugin from '../../src/plugins/caching.js'
import drainingPlugin from '../../src/plugins/draining.js'
import errorsPlugin from '../../src/plugins/errors.js'
import rateLimitPlugin from '../../src/plugins/rate-limit.js'
import requestIdPlugin from '../../src/plugins/request-id.js'
import securityHeadersPlugin from '../../src/plugins/security-headers.js'
import { jobExample } from '../../src/schemas/examples.js'
import { sharedSchemas } from '../../src/schemas/index.js'
import { serverOptions } from '../../src/server-options.js'

export const RUNGS = ['Fastify, service options, errors', '+ request id', '+ security headers', '+ draining', '+ ETag', '+ rate limit (memory)', '+ rate limit (Redis)'] as const

const rung = Number(process.env.PLUGINS ?? 0)
const config = loadConfig({ LOG_LEVEL: 'warn' })
const app = Fastify(serverOptions(config))
for (const schema of sharedSchemas) app.addSchema(schema)
await app.register(errorsPlugin)
if (rung >= 1) await app.register(requestIdPlugin)
if (rung >= 2) await app.register(securityHeadersPlugin, { corsOrigins: [] })
if (rung >= 3) await app.register(drainingPlugin)
if (rung >= 4) await app.register(cachingPlugin)
if (rung >= 5) {
  await app.register(rateLimitPlugin, { perKeyMax: 1_000_000, failedAuthMax: 30, windowSeconds: 60, ...(rung >= 6 ? { redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' } : {}) })
  app.addHook('onRequest', async (request, reply) => {
    ;(request as unknown as { caller: { apiKeyId: string } }).caller = { apiKeyId: 'bench' }
    await app.limits.perKey(request, reply)
  })
}
app.get('/job', { schema: { response: { 200: { $ref: 'Job' } } } }, async () => jobExample)
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 3000) })
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { void app.close() })
