import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.js'
import { configuredZoneRules } from './zones/rules.js'
import type { Database } from './db/database.js'
import { dataDirKey } from './db/data-dir-key.js'
import healthRoutes from './health/routes.js'
import jobRoutes from './jobs/job-routes.js'
import meRoutes from './me/routes.js'
import authPlugin from './plugins/auth.js'
import callerCachePlugin from './plugins/caller-cache.js'
import cachingPlugin from './plugins/caching.js'
import drainingPlugin from './plugins/draining.js'
import errorsPlugin from './plugins/errors.js'
import metricsPlugin from './plugins/metrics.js'
import openapiPlugin from './plugins/openapi.js'
import databasePlugin from './plugins/database-plugin.js'
import rateLimitPlugin, { type RateLimitStore } from './plugins/rate-limit.js'
import scopeGuardPlugin, { apiRoutesAudit } from './plugins/scope-guard.js'
import requestIdPlugin from './plugins/request-id.js'
import requestLimitsPlugin from './plugins/request-limits.js'
import requestLogPlugin from './plugins/request-log.js'
import securityHeadersPlugin from './plugins/security-headers.js'
import tracingPlugin from './plugins/tracing.js'
import summaryFoldPlugin from './plugins/summary-fold.js'
import changeLogPrunePlugin from './plugins/change-log-prune.js'
import zoneRulesUpkeepPlugin from './plugins/zone-rules-upkeep.js'
import { sharedSchemas } from './schemas/index.js'
import { serverOptions } from './server-options.js'
import { ZoneRulesStore } from './zones/store.js'
import type { Lookup } from './webhooks/egress.js'
import webhookRoutes from './webhooks/webhook-routes.js'
import webhooksRuntime from './webhooks/webhooks-plugin.js'
import { Webhooks } from './webhooks/webhooks.js'
import { webhookSettings } from './webhooks/webhook-settings.js'
import { clientReader } from './db/sql-reader.js'

export interface AppOptions {
  config: Config
  /** Owned by the app from here on: closing the app closes it. */
  database: Database
  /** Where log lines go (tests read them); standard output by default. */
  logStream?: NodeJS.WritableStream
  /** How webhook endpoints' names are resolved: the system's resolver by default (tests pass their own, so that no query leaves the machine). */
  webhookLookup?: Lookup
}

/** Builds the app: plugins, then routes. Never listens (tests use inject or listen themselves). */
export async function buildApp ({ config, database, logStream, webhookLookup }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(config, logStream)).withTypeProvider<TypeBoxTypeProvider>()
  for (const schema of sharedSchemas) app.addSchema(schema)

  // Before any route: sees every route, so that one under /api outside the context below stops the start.
  await app.register(apiRoutesAudit)
  await app.register(errorsPlugin)
  await app.register(requestIdPlugin)
  await app.register(requestLogPlugin)
  await app.register(tracingPlugin)
  await app.register(requestLimitsPlugin)
  await app.register(drainingPlugin)
  await app.register(securityHeadersPlugin, { corsOrigins: config.CORS_ORIGINS.split(',').filter(Boolean) })
  await app.register(databasePlugin, { database })
  await app.register(callerCachePlugin, { ttlMs: config.AUTH_CACHE_TTL_MS })
  await app.register(summaryFoldPlugin, { intervalMs: config.SUMMARY_FOLD_INTERVAL_MS })
  await app.register(changeLogPrunePlugin, { intervalMs: config.SYNC_PRUNE_INTERVAL_MS, retentionHours: config.SYNC_RETENTION_HOURS })
  await app.register(openapiPlugin, { publicUrl: config.PUBLIC_URL })
  // Analytics' zone rules, stored in the database at start (one read when they are there);
  // a database out of reach then is not fatal: the first analytics request stores them.
  const zoneRules = new ZoneRulesStore(clientReader(database.prisma), configuredZoneRules(config))
  app.addHook('onReady', async () => {
    await zoneRules.ready().catch((error: unknown) => { app.log.warn({ err: error }, 'zone rules not stored yet: the first analytics request will') })
  })
  await app.register(zoneRulesUpkeepPlugin, { store: zoneRules })
  let rateLimitStore: RateLimitStore | undefined
  await app.register(metricsPlugin, { token: config.METRICS_TOKEN, rateLimitStore: () => rateLimitStore })
  // Webhooks: the queue, and where this instance delivers, the dispatcher and the workers.
  const webhooks = new Webhooks(database, webhookSettings(config), app.log, webhookLookup)
  await app.register(webhooksRuntime, { webhooks })

  // One signer's secret for every route's cursors and tokens: without CURSOR_SECRET, kept in the
  // embedded database's directory (tokens outlive a restart), else random for this app.
  const cursorSecret = config.CURSOR_SECRET ?? (database.dataDir !== undefined ? await dataDirKey(database.dataDir, 'cursor-secret.key') : randomBytes(32).toString('base64'))

  await app.register(healthRoutes, { prefix: '/health', metricsToken: config.METRICS_TOKEN })
  await app.register(async (api) => {
    await api.register(rateLimitPlugin, { perKeyMax: config.RATE_LIMIT_MAX, failedAuthMax: config.AUTH_FAILURE_LIMIT, windowSeconds: config.RATE_LIMIT_WINDOW_S, redisUrl: config.REDIS_URL, onStore: store => { rateLimitStore = store } })
    await api.register(authPlugin)
    await api.register(scopeGuardPlugin)
    await api.register(cachingPlugin)
    await api.register(meRoutes)
    await api.register(jobRoutes, { cursorSecret, upgradeUrl: config.UPGRADE_URL, screensReadMax: config.ANALYTICS_SCREENS_READ_MAX, answerCacheBytes: config.ANALYTICS_CACHE_BYTES, zoneRules })
    await api.register(webhookRoutes, { webhooks, cursorSecret })
  }, { prefix: '/api' })

  return app
}
