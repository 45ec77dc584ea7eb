// A program against a client oazapfts generated from openapi/openapi.json (test/e2e/oazapfts.test.ts
// generates the client, compiles both with tsc and runs this on the demo server). Each check
// prints one line; the first that does not hold exits 1. The narrowings on `status` are
// checks too: were a status not declared, tsc would refuse them (TS2367).
import * as api from './client.js'

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === '') throw new Error(`${name} is not set`)
  return value
}
const apiUrl = env('API_URL')
const jobId = env('JOB_ID')
const pro = { headers: { Authorization: `Bearer ${env('PRO_KEY')}` } }
const free = { headers: { Authorization: `Bearer ${env('FREE_KEY')}` } }

function check (holds: boolean, what: string): void {
  if (!holds) {
    console.log(`FAILED: ${what}`)
    process.exit(1)
  }
  console.log(`ok: ${what}`)
}

// The document's servers entry is `/` (PUBLIC_URL unset): the generated default base URL is
// taken from it, and a path built from it is the path alone, as a browser page would
// resolve it, not `//api/me`.
const built: string[] = []
const sameOrigin = { ...pro, fetch: async (url: RequestInfo | URL, init?: RequestInit) => { built.push(String(url)); return await fetch(new URL(String(url), apiUrl), init) } }
const relative = await api.getMe({}, sameOrigin)
check(built[0] === '/api/me' && relative.status === 200, `default base URL ${JSON.stringify(api.defaults.baseUrl)}: built ${built[0]}, answered ${relative.status}`)

api.defaults.baseUrl = apiUrl

const job = await api.getJob(jobId, {}, pro)
if (job.status !== 200) throw new Error(`getJob: ${job.status}`)
const etag = job.headers.get('etag') ?? ''
check(job.data.id === jobId && /^"[A-Za-z0-9_-]+"$/.test(etag), `getJob 200: "${job.data.title}", ${job.data.interview_count} interviews, ETag ${etag}`)

const unchanged = await api.getJob(jobId, { ifNoneMatch: etag }, pro)
if (unchanged.status === 304) {
  check(unchanged.headers.get('content-type') === null && unchanged.headers.get('content-length') === null && unchanged.headers.get('etag') === etag,
    'getJob with If-None-Match: 304, its ETag, no content-type or content-length')
} else check(false, `getJob with If-None-Match: ${unchanged.status}`)

const me = await api.getMe({}, pro)
if (me.status !== 200) throw new Error(`getMe: ${me.status}`)
const meTag = me.headers.get('etag') ?? ''
check(meTag !== '', `getMe 200: ${me.data.organization.name}, plan ${me.data.subscription.plan}, analytics ${String(me.data.entitlements.analytics)}, ETag ${meTag}`)
const meAgain = await api.getMe({ ifNoneMatch: meTag }, pro)
if (meAgain.status === 304) {
  check(meAgain.headers.get('content-type') === null && meAgain.headers.get('etag') === meTag, 'getMe with If-None-Match: 304, declared, its ETag, no content-type')
} else check(false, `getMe with If-None-Match: ${meAgain.status}`)

// The unfiltered list's cursor carries the walk's sync snapshot, which any transaction on the
// server moves (docs/decisions.md): a 200 with a new ETag is a changed page, and the pair is
// tried again; a 200 with the ETag sent, or no 304 in five pairs, fails.
for (let attempt = 1; ; attempt++) {
  const page = await api.listJobs({ limit: 1 }, pro)
  if (page.status !== 200) throw new Error(`listJobs: ${page.status}`)
  const pageTag = page.headers.get('etag') ?? ''
  const pageAgain = await api.listJobs({ limit: 1, ifNoneMatch: pageTag }, pro)
  const changed = pageAgain.status === 200 && pageAgain.headers.get('etag') !== pageTag
  if (changed && attempt < 5) continue
  check(pageAgain.status === 304 && pageAgain.headers.get('etag') === pageTag,
    `listJobs 200 (${page.data.data.length} job, next_cursor ${page.data.next_cursor === null ? 'null' : 'set'}), then 304 (pair ${attempt})`)
  break
}

const missing = await api.getJob('00000000-0000-4000-8000-000000000000', {}, pro)
if (missing.status === 404) {
  check(missing.data.code === 'not_found', `getJob of a missing job: 404 ${missing.data.code} "${missing.data.error}"`)
} else check(false, `getJob of a missing job: ${missing.status}`)

const analytics = await api.getJobAnalytics(jobId, {}, free)
// The 403 of analytics is InsufficientScope or UpgradeRequired (issue 24): `code` tells them apart.
if (analytics.status === 403 && analytics.data.code === 'upgrade_required') {
  check(analytics.data.upgrade_url.length > 0, `getJobAnalytics on the free plan: 403 ${analytics.data.code}, upgrade_url ${analytics.data.upgrade_url}`)
} else check(false, `getJobAnalytics on the free plan: ${analytics.status} ${analytics.status === 403 ? analytics.data.code : ''}`)

console.log('all checks passed')
