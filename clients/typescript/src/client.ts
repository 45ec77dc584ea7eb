import { EtagCache, isNotModified } from './conditional.js'
import { toScreeningApiError } from './errors.js'
import { createClient, createConfig, type Client } from './generated/client/index.js'
import {
  createWebhookEndpoint, deleteWebhookEndpoint, getJob, getJobAnalytics, getJobsAnalytics, getMe, getOrganizationAnalytics, getWebhookEndpoint, listJobs, listWebhookDeliveries, listWebhookEndpoints, listWebhookEventTypes,
  recoverWebhookEvents, redeliverWebhookEvent, rotateWebhookSecret, testWebhookEndpoint, updateWebhookEndpoint,
  type ClientOptions, type CreateWebhookEndpointData, type GetJobAnalyticsData, type GetOrganizationAnalyticsData, type Job, type JobAnalytics, type JobList, type JobsAnalytics, type ListJobsData,
  type ListWebhookEndpointsData, type Me, type OrganizationAnalytics, type UpdateWebhookEndpointData, type WebhookDelivery, type WebhookDeliveryList, type WebhookEndpoint,
  type WebhookEndpointCreated, type WebhookEndpointList, type WebhookEventsScheduled, type WebhookEventTypeList, type WebhookSecretRotated, type WebhookTestResult,
} from './generated/index.js'
import { retryingFetch, type RetryOptions } from './retry.js'
import { JobSync } from './sync.js'

export interface ScreeningClientOptions {
  /** Where the API is, without `/api`: `https://screening.example.com`. */
  baseUrl: string
  /** An API key (`srk_…`), sent as `Authorization: Bearer`. */
  apiKey: string
  /** Retries of 429 and 503 after `Retry-After`; `false`: none. Default: 3 attempts within 30 s. */
  retry?: RetryOptions | false
  /** Conditional requests for polling: `true` for a cache of its own, or a cache to share; default off. */
  etagCache?: EtagCache | boolean
  /** The `fetch` to send requests with; default `globalThis.fetch`. */
  fetch?: typeof fetch
}

export type JobListQuery = NonNullable<ListJobsData['query']>
export type AnalyticsQuery = NonNullable<GetJobAnalyticsData['query']>
export type OrganizationAnalyticsQuery = NonNullable<GetOrganizationAnalyticsData['query']>
/** A page of webhook endpoints or of an endpoint's deliveries: `limit` (1-100, default 20) and `cursor`. */
export type PageQuery = NonNullable<ListWebhookEndpointsData['query']>
/** A new webhook endpoint: `url`, and optionally `events` (default both job events) and `description`. */
export type WebhookEndpointInput = CreateWebhookEndpointData['body']
/** What to change of an endpoint: any of `url`, `events`, `description`, `status`. */
export type WebhookEndpointChanges = UpdateWebhookEndpointData['body']

/**
 * A POST of the webhooks API: `idempotencyKey` (a new UUID by default) makes it safe to retry,
 * as this client does after a 429 or 503: the server answers a retry with the first answer.
 * Pass your own to retry across your own attempts (a crash, a timeout) within 24 hours.
 */
export interface WriteOptions { idempotencyKey?: string }
const idempotencyKey = (options: WriteOptions): { 'idempotency-key': string } => ({ 'idempotency-key': options.idempotencyKey ?? globalThis.crypto.randomUUID() })

/** Every item of every page, following `next_cursor` until the last page. */
async function * allPages<T> (page: (cursor: string | undefined) => Promise<{ data: T[], next_cursor: string | null }>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined
  do {
    const { data, next_cursor: next } = await page(cursor)
    yield * data
    cursor = next ?? undefined
  } while (cursor !== undefined)
}

/** A body and whether it is the remembered one (the server answered 304: nothing changed). */
export interface Polled<T> { data: T, notModified: boolean }

/**
 * `pollJobAnalytics`' answer, with the IANA tzdata release whose zone rules placed the
 * completions in weeks (the `Tzdata-Version` header): the same data may fall in other weeks
 * by another release's rules.
 */
export interface PolledAnalytics extends Polled<JobAnalytics> { tzdataVersion: string | undefined }

/**
 * The API's operations as methods that return the body or throw a `ScreeningApiError`.
 * `client` is the generated client underneath, for the generated functions of this package.
 */
export class ScreeningClient {
  readonly client: Client
  readonly etagCache: EtagCache | undefined

  constructor (options: ScreeningClientOptions) {
    this.etagCache = options.etagCache === true ? new EtagCache() : options.etagCache === false ? undefined : options.etagCache
    let send = options.fetch ?? globalThis.fetch
    if (options.retry !== false) send = retryingFetch(send, options.retry)
    if (this.etagCache !== undefined) send = this.etagCache.wrap(send)
    this.client = createClient(createConfig<ClientOptions>({ baseUrl: options.baseUrl, auth: options.apiKey, fetch: send, throwOnError: true }))
    this.client.interceptors.error.use((body, response) => response === undefined ? body : toScreeningApiError(body, response))
  }

  /** The caller's user, organization, subscription and entitlements. */
  async getMe (): Promise<Me> {
    return (await getMe({ client: this.client, throwOnError: true })).data
  }

  /** A job of the caller's organization with its counts; `not_found` for any other. */
  async getJob (jobId: string): Promise<Job> {
    return (await this.pollJob(jobId)).data
  }

  /** `getJob`, saying whether the body is unchanged since the last call (needs `etagCache`). */
  async pollJob (jobId: string): Promise<Polled<Job>> {
    const { data, response } = await getJob({ client: this.client, path: { jobId }, throwOnError: true })
    return { data, notModified: isNotModified(response) }
  }

  /** A job's analytics (Pro plan); `upgrade_required` on the free tier. */
  async getJobAnalytics (jobId: string, query: AnalyticsQuery = {}): Promise<JobAnalytics> {
    return (await this.pollJobAnalytics(jobId, query)).data
  }

  /**
   * `getJobAnalytics`, saying whether the body is unchanged since the last call (needs
   * `etagCache`), and which tzdata release's zone rules its weeks follow.
   */
  async pollJobAnalytics (jobId: string, query: AnalyticsQuery = {}): Promise<PolledAnalytics> {
    const { data, response } = await getJobAnalytics({ client: this.client, path: { jobId }, query, throwOnError: true })
    return { data, notModified: isNotModified(response), tzdataVersion: response.headers.get('tzdata-version') ?? undefined }
  }

  /**
   * Many jobs' analytics in one call and one snapshot (Pro plan; 1 to 100 ids): each entry the
   * job's `analytics`, or `error.code` `not_found` for a job that is not the caller's.
   */
  async getJobsAnalytics (jobIds: string[], query: AnalyticsQuery = {}): Promise<JobsAnalytics> {
    return (await getJobsAnalytics({ client: this.client, query: { ...query, job_id: jobIds }, throwOnError: true })).data
  }

  /** The organization's analytics over its jobs (of `job_status`, of `user_id`), as one job's screens (Pro plan). */
  async getOrganizationAnalytics (query: OrganizationAnalyticsQuery = {}): Promise<OrganizationAnalytics> {
    return (await getOrganizationAnalytics({ client: this.client, query, throwOnError: true })).data
  }

  /** One page of the organization's jobs, newest first; pass `next_cursor` back as `cursor`. */
  async listJobs (query: JobListQuery = {}): Promise<JobList> {
    return (await listJobs({ client: this.client, query, throwOnError: true })).data
  }

  /** Every job of the organization (with `status`: of that status), newest first, page after page. */
  listAllJobs (query: Omit<JobListQuery, 'cursor'> = {}): AsyncGenerator<Job, void, undefined> {
    return allPages(async cursor => await this.listJobs(cursor === undefined ? query : { ...query, cursor }))
  }

  /**
   * The jobs that changed since `token` (every job when there is none), as changes to apply
   * to a mirror; afterwards, `.token` is the one to pass next time. Needs `jobs:read`.
   */
  syncJobs (token?: string, options: { limit?: number } = {}): JobSync {
    return new JobSync(async query => await this.listJobs(query), token, options.limit)
  }

  /**
   * A new webhook endpoint: the organization's job changes are POSTed to `url` from now on.
   * The answer's `secret` (`whsec_…`, for `verifyWebhook`) is shown this once. Needs `webhooks:write` and `jobs:read`.
   */
  async createWebhookEndpoint (endpoint: WebhookEndpointInput, options: WriteOptions = {}): Promise<WebhookEndpointCreated> {
    return (await createWebhookEndpoint({ client: this.client, body: endpoint, headers: idempotencyKey(options), throwOnError: true })).data
  }

  /** One page of the organization's webhook endpoints, newest first. Needs `webhooks:read`. */
  async listWebhookEndpoints (query: PageQuery = {}): Promise<WebhookEndpointList> {
    return (await listWebhookEndpoints({ client: this.client, query, throwOnError: true })).data
  }

  /** Every webhook endpoint of the organization, newest first, page after page (`limit` per page). */
  listAllWebhookEndpoints (query: Omit<PageQuery, 'cursor'> = {}): AsyncGenerator<WebhookEndpoint, void, undefined> {
    return allPages(async cursor => await this.listWebhookEndpoints(cursor === undefined ? query : { ...query, cursor }))
  }

  /** A webhook endpoint of the organization (never its secret); `not_found` for any other. */
  async getWebhookEndpoint (endpointId: string): Promise<WebhookEndpoint> {
    return (await getWebhookEndpoint({ client: this.client, path: { endpointId }, throwOnError: true })).data
  }

  /** Changes an endpoint's `url`, `events`, `description` or `status` (`disabled` stops sending). */
  async updateWebhookEndpoint (endpointId: string, changes: WebhookEndpointChanges): Promise<WebhookEndpoint> {
    return (await updateWebhookEndpoint({ client: this.client, path: { endpointId }, body: changes, throwOnError: true })).data
  }

  /** Deletes an endpoint and its record of deliveries: nothing more is sent to it. */
  async deleteWebhookEndpoint (endpointId: string): Promise<void> {
    await deleteWebhookEndpoint({ client: this.client, path: { endpointId }, throwOnError: true })
  }

  /**
   * A new signing secret, shown this once. For `grace_seconds` (default 24 hours; 0 after a
   * leak) the old one signs too: verify with both meanwhile (`verifyWebhook([next, previous], …)`).
   */
  async rotateWebhookSecret (endpointId: string, options: { grace_seconds?: number } = {}, write: WriteOptions = {}): Promise<WebhookSecretRotated> {
    return (await rotateWebhookSecret({ client: this.client, path: { endpointId }, body: options, headers: idempotencyKey(write), throwOnError: true })).data
  }

  /** One page of an endpoint's delivery attempts, newest first. Needs `webhooks:read`. */
  async listWebhookDeliveries (endpointId: string, query: PageQuery = {}): Promise<WebhookDeliveryList> {
    return (await listWebhookDeliveries({ client: this.client, path: { endpointId }, query, throwOnError: true })).data
  }

  /** The event types an endpoint may be sent (the document's `webhooks`), and which it chooses. Needs `webhooks:read`. */
  async listWebhookEventTypes (): Promise<WebhookEventTypeList> {
    return (await listWebhookEventTypes({ client: this.client, throwOnError: true })).data
  }

  /** Every delivery attempt to an endpoint that is still kept, newest first, page after page. */
  listAllWebhookDeliveries (endpointId: string, query: Omit<PageQuery, 'cursor'> = {}): AsyncGenerator<WebhookDelivery, void, undefined> {
    return allPages(async cursor => await this.listWebhookDeliveries(endpointId, cursor === undefined ? query : { ...query, cursor }))
  }

  /** Sends the event of a delivery attempt again, at once, with the same `webhook-id` (unless it is scheduled already: `skipped`). */
  async redeliverWebhookEvent (endpointId: string, deliveryId: string, options: WriteOptions = {}): Promise<WebhookEventsScheduled> {
    return (await redeliverWebhookEvent({ client: this.client, path: { endpointId, deliveryId }, headers: idempotencyKey(options), throwOnError: true })).data
  }

  /**
   * Sends again every event given up on, or missed while the endpoint was disabled, since
   * `since`: 1,000 a call at most (`more`: call again), none already scheduled (`skipped`).
   */
  async recoverWebhookEvents (endpointId: string, since: Date | string, options: WriteOptions = {}): Promise<WebhookEventsScheduled> {
    const body = { since: since instanceof Date ? since.toISOString() : since }
    return (await recoverWebhookEvents({ client: this.client, path: { endpointId }, body, headers: idempotencyKey(options), throwOnError: true })).data
  }

  /**
   * Sends the endpoint a signed `webhook.test` event now and answers how it went (delivered,
   * the status or why there was none, the time it took): a new endpoint checked at once.
   */
  async testWebhookEndpoint (endpointId: string, options: WriteOptions = {}): Promise<WebhookTestResult> {
    return (await testWebhookEndpoint({ client: this.client, path: { endpointId }, body: {}, headers: idempotencyKey(options), throwOnError: true })).data
  }
}

export const createScreeningClient = (options: ScreeningClientOptions): ScreeningClient => new ScreeningClient(options)
