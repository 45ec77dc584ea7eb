import type { FastifyInstance } from 'fastify'

// What a partner does: walk the list once, then sync from the token it ends with, applying
// each page (jobs as they are now; deleted ids removed).

export interface JobItem { id: string, title: string, average_score: number | null, interview_count: number, question_count: number, [field: string]: unknown }
export interface Mirror { jobs: Map<string, JobItem>, token: string }
interface Page { data: JobItem[], next_cursor: string | null, sync_token: string | null, deleted_ids: string[] }

async function pages (app: FastifyInstance, auth: Record<string, string>, query: string, visit: (page: Page) => void): Promise<string> {
  let cursor: string | null = null
  for (let n = 0; n < 10_000; n++) {
    const res: Awaited<ReturnType<FastifyInstance['inject']>> = await app.inject({ url: `/api/jobs?${query}${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, headers: auth })
    if (res.statusCode !== 200) throw Object.assign(new Error(`${res.statusCode} ${res.body}`), { statusCode: res.statusCode })
    const page: Page = res.json()
    visit(page)
    if (page.next_cursor === null) {
      if (page.sync_token === null) throw new Error('the last page has no sync_token')
      return page.sync_token
    }
    if (page.sync_token !== null) throw new Error('a sync_token before the last page')
    cursor = page.next_cursor
  }
  throw new Error('too many pages')
}

export async function walkThenSync (app: FastifyInstance, auth: Record<string, string>, options: { limit?: number } = {}): Promise<Mirror> {
  const jobs = new Map<string, JobItem>()
  const token = await pages(app, auth, `limit=${options.limit ?? 100}`, page => { for (const job of page.data) jobs.set(job.id, job) })
  return { jobs, token }
}

/** One sync of `mirror`, applied to it; what it reported. */
export async function syncFrom (app: FastifyInstance, auth: Record<string, string>, mirror: Mirror, options: { limit?: number } = {}): Promise<{ reported: Set<string>, deleted: Set<string> }> {
  const reported = new Set<string>()
  const deleted = new Set<string>()
  mirror.token = await pages(app, auth, `limit=${options.limit ?? 100}&changed_since=${encodeURIComponent(mirror.token)}`, page => {
    for (const job of page.data) { mirror.jobs.set(job.id, job); reported.add(job.id) }
    for (const id of page.deleted_ids) { mirror.jobs.delete(id); deleted.add(id) }
  })
  return { reported, deleted }
}
