import t from 'tap'
import { zoneRules } from '../../src/zones/rules.js'
import { createClient, createConfig, type Client } from '../../clients/typescript/src/generated/client/index.js'
import {
  getJob, getJobAnalytics, getMe, listJobs,
  type ClientOptions, type ApiError, type InsufficientScope, type Job, type JobAnalytics, type JobList, type Me, type UpgradeRequired,
} from '../../clients/typescript/src/generated/index.js'
import { startServer } from '../helpers/server-process.js'

// The generated TypeScript client (npm run sdk) against the real server and its demo data:
// every operation, through the SDK functions, with results held in the generated types, so
// that `tsc --noEmit` fails when the client and this test drift apart (expected values are
// checked against the generated types with `satisfies`).

const server = await startServer(t)
const clientFor = (key?: string): Client => createClient(createConfig<ClientOptions>({ baseUrl: server.baseUrl, auth: key }))
const pro = clientFor(server.keys.pro)
const free = clientFor(server.keys.free)
const anonymous = clientFor()
const restricted = clientFor(server.keys.restricted)
const jobId = server.sampleJobId
const missingJobId = '00000000-0000-4000-8000-000000000000'

t.test('getMe: the caller of each demo key, with its plan', async t => {
  for (const [client, plan, analytics] of [[pro, 'pro', true], [free, 'free', false]] as const) {
    const { data, response } = await getMe({ client, throwOnError: true })
    t.equal(response.status, 200)
    const me: Me = data
    t.match(me.subscription, { plan } satisfies Partial<Me['subscription']>)
    t.match(me.entitlements, { analytics } satisfies Partial<Me['entitlements']>)
    t.match(me.organization, { name: plan === 'pro' ? 'Acme Recruiting' : 'Globex Hiring' } satisfies Partial<Me['organization']>)
  }
  const res = await getMe({ client: anonymous })
  t.equal(res.response.status, 401)
  t.equal(res.response.headers.get('www-authenticate'), 'Bearer')
  const error: ApiError | undefined = res.error
  t.match(error, { code: 'unauthorized' } satisfies Partial<ApiError>)
})

t.test('getJob: the Pro organization\'s demo job, then a 304 on a conditional request', async t => {
  const first = await getJob({ client: pro, path: { jobId }, throwOnError: true })
  t.equal(first.response.status, 200)
  const job: Job = first.data
  t.match(job, { id: jobId, title: 'Senior Backend Engineer', question_count: 5, interview_count: 80 } satisfies Partial<Job>)
  const averageScore: number | null = job.average_score
  t.type(averageScore, 'number')

  const etag = first.response.headers.get('etag')
  t.ok(etag, 'the 200 carries an ETag')
  const again = await getJob({ client: pro, path: { jobId }, headers: { 'if-none-match': etag ?? '' } })
  t.equal(again.response.status, 304)
  t.equal(again.data, undefined, 'no body on a 304')
  t.equal(again.response.headers.get('etag'), etag)
})

t.test('getJob: another organization\'s job is a 404 for the free key', async t => {
  const res = await getJob({ client: free, path: { jobId } })
  t.equal(res.response.status, 404)
  t.equal(res.data, undefined)
  const error: ApiError | undefined = res.error
  t.match(error, { error: 'Job not found', code: 'not_found' } satisfies Partial<ApiError>)
})

t.test('listJobs: a limit=2 walk along next_cursor returns the whole limit=100 page', async t => {
  const all = await listJobs({ client: pro, query: { limit: 100 }, throwOnError: true })
  const everything: JobList = all.data
  t.equal(everything.next_cursor, null, 'the demo organization has fewer than 100 jobs')
  t.ok(everything.data.length > 2, 'more than one page of 2')
  t.ok(everything.data.some(job => job.id === jobId), 'the demo job is listed')

  const walked: Job[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const { data } = await listJobs({ client: pro, query: { limit: 2, ...(cursor === undefined ? {} : { cursor }) }, throwOnError: true })
    const page: JobList = data
    t.ok(page.data.length <= 2)
    walked.push(...page.data)
    cursor = page.next_cursor ?? undefined
    pages++
  } while (cursor !== undefined && pages < 100)
  t.equal(walked.length, everything.data.length)
  t.same(walked.map(job => job.id), everything.data.map(job => job.id), 'same jobs, same order')

  const globex = await listJobs({ client: free, query: { limit: 100 }, throwOnError: true })
  const other: JobList = globex.data
  t.ok(other.data.length > 0, 'the free organization has jobs')
  t.notOk(other.data.some(job => job.id === jobId), 'but not the Pro organization\'s')
})

t.test('getJobAnalytics: 200 for Pro, 403 upgrade for free, 401 without a key, 404 for a missing job', async t => {
  const { data, response } = await getJobAnalytics({ client: pro, path: { jobId }, throwOnError: true })
  t.equal(response.status, 200)
  t.equal(response.headers.get('tzdata-version'), zoneRules().version, 'the tzdata release of the weeks, in its header')
  const analytics: JobAnalytics = data
  t.match(analytics, { total_interviews: 80 } satisfies Partial<JobAnalytics>)
  const statuses: Array<keyof JobAnalytics['interviews_by_status']> = ['completed', 'expired', 'in_progress']
  t.same(Object.keys(analytics.interviews_by_status).sort(), statuses)
  t.equal(statuses.reduce((sum, status) => sum + analytics.interviews_by_status[status], 0), 80)
  t.ok(analytics.completion_rate >= 0 && analytics.completion_rate <= 100)
  t.ok(Array.isArray(analytics.average_score_by_week))

  const upgrade = await getJobAnalytics({ client: free, path: { jobId }, query: { tz: 'UTC' } })
  t.equal(upgrade.response.status, 403)
  t.equal(upgrade.data, undefined)
  if (upgrade.error === undefined || !('upgrade_url' in upgrade.error)) throw new Error('expected the UpgradeRequired body')
  const body: UpgradeRequired = upgrade.error
  t.match(body, { error: 'Pro subscription required', code: 'upgrade_required', upgrade_url: '/dashboard/billing' } satisfies Partial<UpgradeRequired>)

  const unauthorized = await getJobAnalytics({ client: anonymous, path: { jobId }, query: { tz: 'UTC' } })
  t.equal(unauthorized.response.status, 401)
  t.match(unauthorized.error, { code: 'unauthorized' } satisfies Partial<ApiError>)

  const missing = await getJobAnalytics({ client: pro, path: { jobId: missingJobId }, query: { tz: 'UTC' } })
  t.equal(missing.response.status, 404)
  t.match(missing.error, { error: 'Job not found', code: 'not_found' } satisfies Partial<ApiError>)
})

t.test('scopes: the restricted demo key (jobs:read only) reads jobs; its analytics are a typed 403 insufficient_scope (issue 24)', async t => {
  const me: Me = (await getMe({ client: restricted, throwOnError: true })).data
  t.same(me.scopes, ['jobs:read'] satisfies Me['scopes'])
  t.same((await getMe({ client: pro, throwOnError: true })).data.scopes, ['jobs:read', 'analytics:read', 'webhooks:read', 'webhooks:write'], 'the unrestricted demo key has every scope')
  t.equal((await getJob({ client: restricted, path: { jobId } })).response.status, 200)
  for (const id of [jobId, missingJobId]) {
    const res = await getJobAnalytics({ client: restricted, path: { jobId: id }, query: { tz: 'UTC' } })
    t.equal(res.response.status, 403)
    if (res.error === undefined || !('required_scope' in res.error)) throw new Error('expected the InsufficientScope body')
    const body: InsufficientScope = res.error
    t.match(body, { code: 'insufficient_scope', required_scope: 'analytics:read' } satisfies Partial<InsufficientScope>)
  }
})
