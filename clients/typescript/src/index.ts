// The package's entry: the client with what every partner would otherwise write (pages,
// retries, polling, typed errors, webhook verification), and the generated functions and
// types beneath it.
export {
  createScreeningClient, ScreeningClient,
  type AnalyticsQuery, type JobListQuery, type PageQuery, type Polled, type PolledAnalytics, type ScreeningClientOptions, type WebhookEndpointChanges, type WebhookEndpointInput, type WriteOptions,
} from './client.js'
export { ScreeningApiError } from './errors.js'
export { JobSync, type JobChange } from './sync.js'
export { EtagCache, isNotModified } from './conditional.js'
export { retryingFetch, type RetryOptions } from './retry.js'
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookHeaders, type WebhookVerificationReason } from './verify-webhook.js'
export * from './generated/index.js'
export { createClient, createConfig, type Client } from './generated/client/index.js'
