import { EtagCache, isNotModified } from './conditional.js'
import { toScreeningApiError } from './errors.js'
import { createClient, createConfig, type Client } from './generated/client/index.js'
import {
  getJob, getJobAnalytics, getMe, listJobs,
  type ClientOptions, type GetJobAnalyticsData, type Job, type JobAnalytics, type JobList, type ListJobsData, type Me,
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

  /** One page of the organization's jobs, newest first; pass `next_cursor` back as `cursor`. */
  async listJobs (query: JobListQuery = {}): Promise<JobList> {
    return (await listJobs({ client: this.client, query, throwOnError: true })).data
  }

  /** Every job of the organization (with `status`: of that status), newest first, page after page. */
  async * listAllJobs (query: Omit<JobListQuery, 'cursor'> = {}): AsyncGenerator<Job, void, undefined> {
    let cursor: string | undefined
    do {
      const page = await this.listJobs(cursor === undefined ? query : { ...query, cursor })
      yield * page.data
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
  }

  /**
   * The jobs that changed since `token` (every job when there is none), as changes to apply
   * to a mirror; afterwards, `.token` is the one to pass next time. Needs `jobs:read`.
   */
  syncJobs (token?: string, options: { limit?: number } = {}): JobSync {
    return new JobSync(async query => await this.listJobs(query), token, options.limit)
  }
}

export const createScreeningClient = (options: ScreeningClientOptions): ScreeningClient => new ScreeningClient(options)
