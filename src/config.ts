import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

const Int = (options: { default: number, minimum: number, maximum: number, description: string }) =>
  Type.Integer(options)

/** Every environment variable the service reads. The Config type is derived from it. */
export const ConfigSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', minLength: 1, description: 'Address to listen on (0.0.0.0 in a container).' }),
  PORT: Int({ default: 3000, minimum: 0, maximum: 65535, description: 'Port to listen on (0 picks a free one).' }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+[^/\\s]$', description: 'Base URL as clients see it; the OpenAPI servers entry. Defaults to http://HOST:PORT.' })),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(l => Type.Literal(l)), { default: 'info', description: 'Least severe log level written.' }),
  LOG_FORMAT: Type.Union([Type.Literal('json'), Type.Literal('pretty'), Type.Literal('auto')], { default: 'json', description: 'json: one JSON object a line (production); pretty: human-readable, through pino-pretty, a development dependency; auto: pretty when standard output is a terminal, else json (npm run dev).' }),

  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'PostgreSQL server. Unset: the embedded database under DATA_DIR.' })),
  DATABASE_LISTEN_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'The same database as DATABASE_URL, reached without a transaction-mode pooler (PgBouncer pool_mode=transaction), for the LISTEN that keeps the caller cache exact; unset: DATABASE_URL.' })),
  DATABASE_REPLICA_URLS: Type.String({ default: '', pattern: '^(postgres(ql)?://[^\\s,]+(,postgres(ql)?://[^\\s,]+)*)?$', description: 'Comma-separated read replicas of DATABASE_URL: reads go to a healthy one, writes and credential checks to the primary; empty: none.' }),
  REPLICA_MAX_LAG_MS: Int({ default: 5000, minimum: 0, maximum: 3_600_000, description: 'A replica further behind the primary than this is skipped until it catches up.' }),
  REPLICA_CHECK_INTERVAL_MS: Int({ default: 1000, minimum: 100, maximum: 600_000, description: 'How often each replica\'s reachability and lag are checked.' }),
  DB_POOL_MAX: Int({ default: 10, minimum: 1, maximum: 500, description: 'Connections in the pool.' }),
  DB_CONNECTION_TIMEOUT_MS: Int({ default: 2000, minimum: 1, maximum: 600_000, description: 'Wait for a connection (new or from the pool); also how long the change listener\'s probe has to come back: the caller cache\'s bound is 5 s + this.' }),
  DB_QUERY_TIMEOUT_MS: Int({ default: 5000, minimum: 1, maximum: 600_000, description: 'Client-side bound on one query.' }),
  DB_STATEMENT_TIMEOUT_MS: Int({ default: 4000, minimum: 1, maximum: 600_000, description: 'Server-side statement_timeout.' }),
  REQUEST_TIMEOUT_MS: Int({ default: 5000, minimum: 100, maximum: 600_000, description: 'Longest a request may take, from routing to response; past it, 503 `unavailable` (a hung database). Bounds every wait above.' }),
  ANALYTICS_SCREENS_READ_MAX: Int({ default: 500, minimum: 0, maximum: 100_000, description: 'Analytics of a job with at most this many completed screens are computed from its screens, which for a small job is cheaper than its summaries; the answer is the same. 0: always from the summaries.' }),
  ANALYTICS_CACHE_BYTES: Int({ default: 4_194_304, minimum: 0, maximum: 1_073_741_824, description: 'Analytics answers this instance keeps (their bytes at most; the least recently asked go first), one budget for the single job, the batch (its entries and its whole answer) and the rollup: a question asked again is answered from the version of its jobs\' figures, as a 304 is, while they are unchanged. 0: none kept.' }),
  SUMMARY_FOLD_INTERVAL_MS: Int({ default: 1000, minimum: 0, maximum: 3_600_000, description: 'How often this instance folds the screens\' summary deltas into the summaries (one instance at a time does; reads stay exact either way, and cost a little more per delta not yet folded). 0: never (another instance or `npm run admin -- fold-stats` must).' }),
  SYNC_RETENTION_HOURS: Int({ default: 720, minimum: 1, maximum: 87_600, description: 'How long the change log behind incremental sync (`changed_since`) keeps a change: a sync token older than this may answer 410 `sync_token_expired`, and the partner walks the list again.' }),
  SYNC_PRUNE_INTERVAL_MS: Int({ default: 60_000, minimum: 0, maximum: 86_400_000, description: 'How often this instance prunes the change log past SYNC_RETENTION_HOURS and collapses each job\'s finished changes into one row (one instance at a time does). 0: never (another instance must).' }),
  MIGRATION_LOCK_TIMEOUT_MS: Int({ default: 200, minimum: 1, maximum: 600_000, description: 'db:migrate: longest a migration waits for a lock (so that readers queued behind it wait no longer); it is retried until MIGRATION_RETRY_FOR_S.' }),
  MIGRATION_RETRY_FOR_S: Int({ default: 600, minimum: 0, maximum: 86_400, description: 'db:migrate: how long a migration that could not get its locks is retried before the command fails.' }),
  DATA_DIR: Type.String({ default: './.data', minLength: 1, description: 'Where the embedded database lives; one process at a time owns it, and serves it on its socket DATA_DIR/.s.PGSQL.5432 (npm run admin and psql -h DATA_DIR reach it there).' }),

  TRUST_PROXY_HOPS: Int({ default: 0, minimum: 0, maximum: 10, description: 'Reverse proxies in front whose X-Forwarded-For is trusted (for client IPs); 0: none.' }),
  CURSOR_SECRET: Type.Optional(Type.String({ minLength: 32, description: 'Signs pagination cursors; every instance must have the same. Required with DATABASE_URL; unset on the embedded database: made once and kept in DATA_DIR/cursor-secret.key.' })),
  AUTH_CACHE_TTL_MS: Int({ default: 30_000, minimum: 0, maximum: 3_600_000, description: 'Backstop bound on how long an authenticated caller is kept in memory; changes to keys and plans clear it at once (LISTEN/NOTIFY), and a change not heard is served for less than 5 s + DB_CONNECTION_TIMEOUT_MS. 0: look callers up on every request.' }),
  RATE_LIMIT_MAX: Int({ default: 600, minimum: 1, maximum: 1_000_000, description: 'Requests per window per API key.' }),
  AUTH_FAILURE_LIMIT: Int({ default: 30, minimum: 1, maximum: 1_000_000, description: 'Failed authentications per window per client IP before 429.' }),
  RATE_LIMIT_WINDOW_S: Int({ default: 60, minimum: 1, maximum: 3600, description: 'Length of the rate-limit window in seconds, for both limits above.' }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://', description: 'Redis for rate-limit counters shared by every instance; unset: in memory.' })),
  CORS_ORIGINS: Type.String({ default: '', pattern: '^(https?://[^\\s,]+(,https?://[^\\s,]+)*)?$', description: 'Comma-separated origins allowed by CORS; empty: CORS off.' }),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16, description: 'Bearer token of GET /metrics (Prometheus); unset: no /metrics.' })),
  ZONE_RULES_FILE: Type.Optional(Type.String({ minLength: 1, description: 'Zone rules for analytics\' weeks: a moment-timezone packed data file (`data/packed/latest.json` of a release of the package). Unset: those of the moment-timezone pinned in package.json. Every instance should have the same (the ETag and the tzdata-version header name them).' })),
  UPGRADE_URL: Type.String({ default: '/dashboard/billing', pattern: '^/', description: 'Relative path of the billing page, in 403 bodies.' }),

  WEBHOOK_SECRET_KEY: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', description: 'Encrypts webhook endpoints\' signing secrets at rest: 32 random bytes in base64 (`openssl rand -base64 32`), the same on every instance. Unset with DATABASE_URL: webhook endpoints cannot be created or delivered to (503); on the embedded database: made once and kept in DATA_DIR/webhook-secret.key.' })),
  WEBHOOK_ENDPOINTS_MAX: Int({ default: 16, minimum: 1, maximum: 1000, description: 'Webhook endpoints an organization may have (enabled or disabled; deleted ones do not count): past it, creating one answers 409 `endpoint_limit_reached`. Every endpoint is told each change, so this bounds what one organization costs the dispatcher.' }),
  WEBHOOK_ALLOWED_NETWORKS: Type.String({ default: '', pattern: '^([0-9a-fA-F.:]+/[0-9]{1,3}(,[0-9a-fA-F.:]+/[0-9]{1,3})*)?$', description: 'Comma-separated CIDRs a webhook endpoint may be in although they are not public (private, loopback...), over plain http too: e.g. `127.0.0.0/8` for local development. Empty: public addresses only, over https.' }),
  WEBHOOK_RETRY_DELAYS: Type.String({ default: '5s,5m,30m,2h,5h,10h,10h', pattern: '^[0-9]{1,6}(ms|s|m|h|d)(,[0-9]{1,6}(ms|s|m|h|d)){0,19}$', description: 'Waits before each retry of a failed webhook delivery (each with up to 20% jitter), comma-separated: `ms`, `s`, `m`, `h`, `d`. A `Retry-After` of the endpoint\'s is honoured when longer. After the last, the event is given up (`recover` resends it).' }),
  WEBHOOK_DISABLE_AFTER: Type.String({ default: '5d', pattern: '^[0-9]{1,6}(ms|s|m|h|d)$', description: 'A webhook endpoint whose every delivery has failed for this long is disabled (a metric and a log line say so).' }),
  WEBHOOK_FAILING_AFTER: Int({ default: 10, minimum: 1, maximum: 1_000_000, description: 'Failed attempts in a row to a webhook endpoint after which its organization\'s other enabled endpoints are sent webhook_endpoint.failing (once a failing spell).' }),
  WEBHOOK_TIMEOUT_MS: Int({ default: 15_000, minimum: 100, maximum: 60_000, description: 'Longest a webhook delivery may take, connection included.' }),
  WEBHOOK_DELIVERY_RETENTION_DAYS: Int({ default: 30, minimum: 1, maximum: 3650, description: 'How long the record of each delivery attempt is kept (GET …/deliveries, recover).' }),
  WEBHOOK_WORKER: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on', description: 'on: this instance dispatches the change log to webhook endpoints and delivers (with every other instance that does). off: it only serves the API, and the instances where it is on deliver.' }),
  WEBHOOK_CONCURRENCY: Int({ default: 16, minimum: 1, maximum: 256, description: 'Delivery jobs (an endpoint\'s batch of events) this instance works at once, over every endpoint; each sends WEBHOOK_ENDPOINT_CONCURRENCY at a time. 4 at most on the embedded database.' }),
  WEBHOOK_ENDPOINT_CONCURRENCY: Int({ default: 4, minimum: 1, maximum: 64, description: 'Deliveries in flight at once to one endpoint, over every instance: a slow endpoint holds no more than this.' }),
  WEBHOOK_DISPATCH_INTERVAL_MS: Int({ default: 200, minimum: 10, maximum: 60_000, description: 'How often the change log is read for webhook endpoints (one instance at a time does).' }),
})

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {}

/**
 * Reads the configuration from an environment. Empty strings count as unset, so that
 * `PORT=` in a .env file means "the default", not "invalid".
 */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {}
  for (const [key, schema] of Object.entries(ConfigSchema.properties)) {
    const value = env[key]
    if (value === undefined || value === '') continue
    // Integers are parsed strictly: "1.5" or "10ms" is an error, not 1 or 10.
    raw[key] = (schema as { type?: string }).type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value
  }
  const candidate = Value.Default(ConfigSchema, raw)
  const errors = [...Value.Errors(ConfigSchema, candidate)]
  if (errors.length > 0) {
    const lines = errors.map(e => {
      const name = e.path.replace(/^\//, '')
      return `  ${name}=${JSON.stringify(env[name] ?? '')}: ${e.message}`
    })
    throw new ConfigError(`Invalid configuration:\n${[...new Set(lines)].join('\n')}`)
  }
  return candidate as Config
}

/**
 * What serving needs beyond valid values: on a PostgreSQL server (production, likely several
 * instances behind a load balancer) a cursor made by one instance must be accepted by the
 * next, so the secret has to be shared and cannot default to a random one.
 */
export function checkServingConfig (config: Config): void {
  if (config.DATABASE_URL !== undefined && config.CURSOR_SECRET === undefined) {
    throw new ConfigError('Invalid configuration:\n  CURSOR_SECRET is required when DATABASE_URL is set: the same value (32 characters or more, e.g. `openssl rand -base64 48`) on every instance, so that a list cursor made by one instance is accepted by the others.')
  }
  if (config.DATABASE_LISTEN_URL !== undefined && config.DATABASE_URL === undefined) {
    throw new ConfigError('Invalid configuration:\n  DATABASE_LISTEN_URL needs DATABASE_URL: the embedded database listens in process.')
  }
  if (config.DATABASE_REPLICA_URLS !== '' && config.DATABASE_URL === undefined) {
    throw new ConfigError('Invalid configuration:\n  DATABASE_REPLICA_URLS needs DATABASE_URL (the primary): the embedded database has no replicas.')
  }
}
