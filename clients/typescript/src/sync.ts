import { ScreeningApiError } from './errors.js'
import type { Job, JobList, ListJobsData } from './generated/index.js'

/** What a sync tells a mirror: a job as it is now, a job gone, or "start again" (the token expired). */
export type JobChange =
  | { type: 'job', job: Job }
  | { type: 'deleted', id: string }
  /**
   * The token cannot be answered (410 `sync_token_expired`: older than the change log kept,
   * or expired by the operator; or a 400 on `changed_since`: the service's signing secret was
   * changed): clear the mirror; the walk that follows refills it.
   */
  | { type: 'reset' }

type ListQuery = NonNullable<ListJobsData['query']>

/** A token the service will not answer: walk again. */
const unusable = (error: unknown): boolean => error instanceof ScreeningApiError &&
  (error.code === 'sync_token_expired' || (error.code === 'invalid_request' && (error.details ?? []).some(d => d.path === 'querystring/changed_since')))

/**
 * A sync of an organization's jobs: iterate it for the changes, then read `token` and keep it
 * for the next one. Without a token (the first time), it walks every job; with one, it asks
 * `changed_since` for what changed, and walks again when the token expired. A job may come
 * twice; apply changes in order and the mirror equals the organization's jobs.
 */
export class JobSync implements AsyncIterable<JobChange> {
  #token: string | undefined
  #done = false

  constructor (private readonly list: (query: ListQuery) => Promise<JobList>, private readonly since: string | undefined, private readonly limit = 100) {}

  /** The token to sync from next time; once the iteration has finished. */
  get token (): string {
    if (!this.#done || this.#token === undefined) throw new Error('JobSync.token is known once every change has been read')
    return this.#token
  }

  async * [Symbol.asyncIterator] (): AsyncGenerator<JobChange, void, undefined> {
    const since = this.since
    if (since !== undefined) {
      try {
        yield * this.#pages({ changed_since: since })
        return
      } catch (error) {
        if (!unusable(error)) throw error
        yield { type: 'reset' }
      }
    }
    yield * this.#pages({})
  }

  async * #pages (query: ListQuery): AsyncGenerator<JobChange, void, undefined> {
    let cursor: string | undefined
    for (;;) {
      const page = await this.list({ ...query, limit: this.limit, ...(cursor !== undefined ? { cursor } : {}) })
      for (const job of page.data) yield { type: 'job', job }
      for (const id of page.deleted_ids) yield { type: 'deleted', id }
      if (page.next_cursor === null) {
        if (page.sync_token === null) throw new Error('the last page carried no sync_token')
        this.#token = page.sync_token
        this.#done = true
        return
      }
      cursor = page.next_cursor
    }
  }
}
