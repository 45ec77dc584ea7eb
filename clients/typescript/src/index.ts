// The package's entry: the client with what every partner would otherwise write (pages,
// retries, polling, typed errors), and the generated functions and types beneath it.
export { createScreeningClient, ScreeningClient, type AnalyticsQuery, type JobListQuery, type Polled, type PolledAnalytics, type ScreeningClientOptions } from './client.js'
export { ScreeningApiError } from './errors.js'
export { JobSync, type JobChange } from './sync.js'
export { EtagCache, isNotModified } from './conditional.js'
export { retryingFetch, type RetryOptions } from './retry.js'
export * from './generated/index.js'
export { createClient, createConfig, type Client } from './generated/client/index.js'
