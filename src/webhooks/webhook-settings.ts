import type { Config } from '../config.js'
import { durationMs, durationsMs } from './durations.js'

// The webhooks' settings, read once from the configuration (src/config.ts) for the feature's
// parts: the guard, the dispatcher, the sender and the workers.

export interface WebhookSettings {
  allowedNetworks: string[]
  /** Endpoints an organization may have. */
  endpointsMax: number
  retryDelaysMs: number[]
  disableAfterMs: number
  /** Failed attempts in a row after which the organization's other endpoints are told (webhook_endpoint.failing). */
  failingAfter: number
  timeoutMs: number
  /** A test event's: within the request's own bound, so that its answer is the attempt's. */
  testTimeoutMs: number
  retentionDays: number
  worker: boolean
  concurrency: number
  endpointConcurrency: number
  dispatchIntervalMs: number
  secretKey: string | undefined
  dataDir: string
  /**
   * Longest a delivery waits for the replicas taking reads to replay its changes: by then a
   * replica that has not is lagging, and takes no reads (REPLICA_MAX_LAG_MS, checked every
   * REPLICA_CHECK_INTERVAL_MS).
   */
  replicaWaitMs: number
}

export const webhookSettings = (config: Config): WebhookSettings => ({
  allowedNetworks: config.WEBHOOK_ALLOWED_NETWORKS.split(',').filter(Boolean),
  endpointsMax: config.WEBHOOK_ENDPOINTS_MAX,
  retryDelaysMs: durationsMs(config.WEBHOOK_RETRY_DELAYS),
  disableAfterMs: durationMs(config.WEBHOOK_DISABLE_AFTER),
  failingAfter: config.WEBHOOK_FAILING_AFTER,
  timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  testTimeoutMs: Math.max(100, Math.min(config.WEBHOOK_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS - 1000)),
  retentionDays: config.WEBHOOK_DELIVERY_RETENTION_DAYS,
  worker: config.WEBHOOK_WORKER === 'on',
  concurrency: config.WEBHOOK_CONCURRENCY,
  endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
  dispatchIntervalMs: config.WEBHOOK_DISPATCH_INTERVAL_MS,
  secretKey: config.WEBHOOK_SECRET_KEY,
  dataDir: config.DATA_DIR,
  replicaWaitMs: config.REPLICA_MAX_LAG_MS + 2 * config.REPLICA_CHECK_INTERVAL_MS + 1000,
})
