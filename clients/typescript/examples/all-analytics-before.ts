// Before: every job's analytics, polled, written against the bare generated client. The
// same task as all-analytics-after.ts; both are compiled and run by the package's test.
import { createClient, createConfig, getJobAnalytics, listJobs, type ClientOptions, type Job, type JobAnalytics } from '@screening/read-api'

const client = createClient(createConfig<ClientOptions>({ baseUrl: process.env.SCREENING_API_URL!, auth: process.env.SCREENING_API_KEY! }))

// Retries: the generated client returns a 429 like any other error.
async function withRetries<T extends { response: Response }> (call: () => Promise<T>): Promise<T> {
  const started = Date.now()
  for (let attempt = 1; ; attempt++) {
    const result = await call()
    const status = result.response.status
    if ((status !== 429 && status !== 503) || attempt >= 3) return result
    const header = result.response.headers.get('retry-after')
    const seconds = header === null ? NaN : /^\d+$/.test(header) ? Number(header) : (Date.parse(header) - Date.now()) / 1000
    const waitMs = Number.isNaN(seconds) ? 500 * 2 ** (attempt - 1) : Math.max(0, seconds * 1000)
    if (Date.now() - started + waitMs > 30_000) return result
    await new Promise(resolve => setTimeout(resolve, waitMs))
  }
}

// Pagination: follow next_cursor by hand.
async function allJobs (): Promise<Job[]> {
  const jobs: Job[] = []
  let cursor: string | undefined
  do {
    const { data, error, response } = await withRetries(async () => await listJobs({ client, query: { limit: 100, ...(cursor !== undefined ? { cursor } : {}) } }))
    if (data === undefined) throw new Error(`listJobs: ${response.status} ${error?.code ?? ''}`)
    jobs.push(...data.data)
    cursor = data.next_cursor ?? undefined
  } while (cursor !== undefined)
  return jobs
}

// Polling: remember each job's ETag and body; a 304 comes back as an error with no body.
const etags = new Map<string, { etag: string, body: JobAnalytics }>()
async function analytics (jobId: string): Promise<{ body: JobAnalytics, changed: boolean } | 'upgrade' | 'gone'> {
  const cached = etags.get(jobId)
  const { data, error, response } = await withRetries(async () => await getJobAnalytics({
    client, path: { jobId }, ...(cached !== undefined ? { headers: { 'if-none-match': cached.etag } } : {}),
  }))
  if (response.status === 304 && cached !== undefined) return { body: cached.body, changed: false }
  if (data !== undefined) {
    const etag = response.headers.get('etag')
    if (etag !== null) etags.set(jobId, { etag, body: data })
    return { body: data, changed: true }
  }
  // Errors: the body's type depends on the status; `code` tells them apart.
  if (error !== undefined && 'code' in error && error.code === 'upgrade_required') return 'upgrade'
  if (error !== undefined && 'code' in error && error.code === 'not_found') return 'gone'
  throw new Error(`getJobAnalytics: ${response.status} ${error !== undefined && 'code' in error ? error.code : ''} ${error !== undefined && 'request_id' in error ? error.request_id : ''}`)
}

for (let poll = 0; poll < 2; poll++) {
  let changed = 0
  let unchanged = 0
  for (const job of await allJobs()) {
    const result = await analytics(job.id)
    if (result === 'upgrade') throw new Error('analytics need the Pro plan')
    if (result === 'gone') continue
    if (result.changed) changed++
    else unchanged++
  }
  console.log(`poll ${poll + 1}: ${changed} changed, ${unchanged} unchanged`)
}
