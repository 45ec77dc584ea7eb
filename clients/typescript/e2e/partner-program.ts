// A partner's program against the installed package (test/e2e/sdk-package.test.ts compiles it
// with tsc in a project outside the repository and runs it on the demo server). It checks
// each behaviour, prints one line per check, and exits 1 at the first that does not hold.
import assert from 'node:assert/strict'
import { createScreeningClient, EtagCache, ScreeningApiError, type Job, type WebhookDelivery, type WebhookEndpoint, type WebhookEndpointCreated } from '@screening/read-api'

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === '') throw new Error(`${name} is not set`)
  return value
}
const baseUrl = env('API_URL')
const jobId = env('JOB_ID')
const missingJobId = '00000000-0000-4000-8000-000000000000'

/** A fetch that records each status the server sent, under the SDK's layers. */
function recording (): { fetch: typeof fetch, statuses: number[] } {
  const statuses: number[] = []
  return {
    statuses,
    fetch: async (input, init) => {
      const response = await fetch(input, init)
      statuses.push(response.status)
      return response
    },
  }
}

async function thrown (promise: Promise<unknown>): Promise<ScreeningApiError> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof ScreeningApiError, `a ScreeningApiError, got ${String(error)}`)
    return error
  }
  assert.fail('expected an error')
}

const pro = createScreeningClient({ baseUrl, apiKey: env('PRO_KEY') })
const free = createScreeningClient({ baseUrl, apiKey: env('FREE_KEY') })

const me = await pro.getMe()
assert.equal(me.subscription.plan, 'pro')
console.log(`getMe: ${me.organization.name}, plan ${me.subscription.plan}, analytics ${me.entitlements.analytics}`)

const job = await pro.getJob(jobId)
assert.equal(job.id, jobId)
console.log(`getJob: "${job.title}", ${job.question_count} questions, ${job.interview_count} screens, average ${job.average_score}`)

const analytics = await pro.getJobAnalytics(jobId, { tz: 'Asia/Kolkata' })
assert.equal(analytics.total_interviews, job.interview_count)
const ranged = await pro.getJobAnalytics(jobId, { tz: 'UTC', from: '2020-01-06', to: '2020-01-19' })
assert.deepEqual(ranged.average_score_by_week.map(w => w.week), ['2020-01-06', '2020-01-13'])
console.log(`getJobAnalytics: ${analytics.completion_rate}% completed, ${analytics.average_score_by_week.length} weeks; a two-week range gives ${ranged.average_score_by_week.length} bins`)

const missingId = '00000000-0000-4000-8000-000000000000'
const batch = await pro.getJobsAnalytics([jobId, missingId, jobId], { tz: 'Asia/Kolkata' })
assert.deepEqual(batch.jobs.map(entry => entry.job_id), [jobId, missingId])
const [found, unknown] = batch.jobs
assert.ok(found !== undefined && 'analytics' in found && unknown !== undefined && 'error' in unknown)
assert.deepEqual(found.analytics, analytics)
assert.equal(unknown.error.code, 'not_found')
console.log(`getJobsAnalytics: ${batch.jobs.length} entries, the first equal to getJobAnalytics, the second ${unknown.error.code}`)

const everything = await pro.listJobs({ limit: 100 })
assert.equal(everything.next_cursor, null)
const pages = recording()
const paged = createScreeningClient({ baseUrl, apiKey: env('PRO_KEY'), fetch: pages.fetch })
const walked: Job[] = []
for await (const each of paged.listAllJobs({ limit: 1 })) walked.push(each)
assert.deepEqual(walked.map(j => j.id), everything.data.map(j => j.id))
assert.equal(pages.statuses.length, everything.data.length, 'one request a job with limit=1')
const active = []
for await (const each of pro.listAllJobs({ status: 'active', limit: 1 })) active.push(each)
assert.deepEqual(active.map(j => j.id), everything.data.filter(j => j.status === 'active').map(j => j.id))
console.log(`listAllJobs: ${walked.length} jobs in ${pages.statuses.length} pages of 1, same order as one page of 100; ${active.length} active`)

// A mirror: the first sync walks every job; the next, from its token, finds nothing changed
// (nobody writes the demo data meanwhile) and hands a new token.
const mirror = new Map<string, Job>()
const initial = pro.syncJobs(undefined, { limit: 1 })
for await (const change of initial) if (change.type === 'job') mirror.set(change.job.id, change.job)
assert.deepEqual([...mirror.keys()].sort(), everything.data.map(j => j.id).sort())
const next = pro.syncJobs(initial.token)
const changes = []
for await (const change of next) changes.push(change)
assert.deepEqual(changes, [])
assert.match(next.token, /\S/)
console.log(`syncJobs: a walk mirrored ${mirror.size} jobs; the sync from its token found ${changes.length} changes and a new token`)

const upgrade = await thrown(free.getJobAnalytics(jobId))
assert.equal(upgrade.status, 403)
assert.equal(upgrade.code, 'upgrade_required')
assert.equal(upgrade.upgrade_url, '/dashboard/billing')
assert.match(upgrade.request_id ?? '', /\S/)
console.log(`403: ScreeningApiError ${upgrade.code}, upgrade_url ${upgrade.upgrade_url}, request_id ${upgrade.request_id}`)

// A key restricted to jobs:read (the demo's restricted key): analytics are refused for the
// scope, whatever the job; jobs are read; getMe lists the scopes.
const restricted = createScreeningClient({ baseUrl, apiKey: env('RESTRICTED_KEY') })
assert.deepEqual((await restricted.getMe()).scopes, ['jobs:read'])
for (const id of [jobId, missingJobId]) {
  const scope = await thrown(restricted.getJobAnalytics(id))
  assert.equal(scope.status, 403)
  assert.equal(scope.code, 'insufficient_scope')
  assert.equal(scope.required_scope, 'analytics:read')
  assert.equal(scope.upgrade_url, undefined)
}
assert.equal((await restricted.getJob(jobId)).id, jobId)
console.log('403: ScreeningApiError insufficient_scope, required_scope analytics:read (an existing and a missing job alike); getJob works; getMe lists jobs:read')

const missing = await thrown(pro.getJob(missingJobId))
assert.equal(missing.status, 404)
assert.equal(missing.code, 'not_found')
const foreign = await thrown(free.getJob(jobId))
assert.equal(foreign.code, 'not_found', 'another organization\'s job is a 404 too')
const invalid = await thrown(pro.getJobAnalytics(jobId, { tz: 'Mars/Olympus_Mons' }))
assert.equal(invalid.code, 'invalid_request')
assert.equal(invalid.details?.[0]?.path, 'querystring/tz')
console.log(`404: ScreeningApiError ${missing.code} (missing and foreign), 400: ${invalid.code} on ${invalid.details?.[0]?.path}`)

const polls = recording()
const poller = createScreeningClient({ baseUrl, apiKey: env('PRO_KEY'), etagCache: new EtagCache(10), fetch: polls.fetch })
const first = await poller.pollJob(jobId)
const second = await poller.pollJob(jobId)
assert.equal(first.notModified, false)
assert.equal(second.notModified, true)
assert.deepEqual(second.data, first.data)
assert.deepEqual(polls.statuses, [200, 304])
console.log(`polling: statuses ${polls.statuses.join(', ')}; the 304 served the cached body (notModified ${second.notModified})`)
const weekly = await poller.pollJobAnalytics(jobId, { tz: 'America/Vancouver' })
const weeklyAgain = await poller.pollJobAnalytics(jobId, { tz: 'America/Vancouver' })
assert.match(weekly.tzdataVersion ?? '', /^20\d\d[a-z]$/)
assert.equal(weeklyAgain.notModified, true)
assert.equal(weeklyAgain.tzdataVersion, weekly.tzdataVersion, 'the 304 replays the header too')
console.log(`analytics polled: tzdata ${weekly.tzdataVersion}, then a 304 with it`)

// Webhook endpoints (at WEBHOOK_URL, where nothing listens: the demo data does not change, so
// nothing is sent): made, walked a page of 1 at a time, changed, rotated, deleted.
const hooks = recording()
const manager = createScreeningClient({ baseUrl, apiKey: env('PRO_KEY'), fetch: hooks.fetch })
const made: WebhookEndpointCreated[] = []
for (const n of [1, 2, 3]) made.push(await manager.createWebhookEndpoint({ url: `${env('WEBHOOK_URL')}/${n}`, description: `partner ${n}` }))
assert.ok(made.every(e => e.secret.startsWith('whsec_') && e.status === 'enabled'))
hooks.statuses.length = 0
const endpoints: WebhookEndpoint[] = []
for await (const each of manager.listAllWebhookEndpoints({ limit: 1 })) endpoints.push(each)
assert.ok(made.every(m => endpoints.filter(e => e.id === m.id).length === 1), 'each endpoint made, once')
assert.ok(hooks.statuses.length >= endpoints.length, 'a request per page of 1')
const disabled = await manager.updateWebhookEndpoint(made[0]!.id, { status: 'disabled' })
assert.deepEqual([disabled.status, disabled.disabled_reason], ['disabled', 'requested'])
const rotated = await manager.rotateWebhookSecret(made[1]!.id, { grace_seconds: 0 })
assert.ok(rotated.secret.startsWith('whsec_') && rotated.secret !== made[1]!.secret)
assert.equal(rotated.previous_secret_expires_at, null)
const attempts: WebhookDelivery[] = []
for await (const delivery of manager.listAllWebhookDeliveries(made[2]!.id)) attempts.push(delivery)
assert.deepEqual(attempts, [])
const check = await manager.testWebhookEndpoint(made[1]!.id)
assert.equal(check.delivered, false, `a test event to where nothing listens: not delivered (${check.error})`)
assert.match(check.event_id, /^msg_test_/)
const unscoped = await thrown(restricted.listWebhookEndpoints())
assert.deepEqual([unscoped.status, unscoped.code, unscoped.required_scope], [403, 'insufficient_scope', 'webhooks:read'])
for (const endpoint of made) await manager.deleteWebhookEndpoint(endpoint.id)
assert.equal((await thrown(manager.getWebhookEndpoint(made[0]!.id))).code, 'not_found')
console.log(`webhook endpoints: ${made.length} made, ${endpoints.length} walked in ${hooks.statuses.length} pages of 1, one disabled, one rotated, no deliveries, a test event not delivered (${check.error}); 403 ${unscoped.required_scope} for the restricted key; deleted`)

// A key limited to 2 requests a 2-second window: the third request is answered 429.
const limitedUrl = env('LIMITED_URL')
const limitedKey = env('LIMITED_KEY')
const retries = recording()
const retrying = createScreeningClient({ baseUrl: limitedUrl, apiKey: limitedKey, fetch: retries.fetch, retry: { maxAttempts: 3, maxElapsedMs: 10_000 } })
await retrying.getMe()
await retrying.getMe()
const started = Date.now()
const after429 = await retrying.getMe()
const waited = Date.now() - started
assert.equal(after429.subscription.plan, 'pro')
assert.deepEqual(retries.statuses, [200, 200, 429, 200])
assert.ok(waited >= 900, `waited ${waited} ms, as Retry-After asked`)
const once = recording()
const impatient = createScreeningClient({ baseUrl: limitedUrl, apiKey: limitedKey, fetch: once.fetch, retry: false })
// The window restarted with the retried request: at most two more get through.
let limited: ScreeningApiError | undefined
for (let i = 0; i < 3 && limited === undefined; i++) limited = await impatient.getMe().then(() => undefined, async (error: unknown) => await thrown(Promise.reject(error)))
assert.ok(limited !== undefined, 'a 429 within three requests')
assert.equal(limited.code, 'rate_limited')
assert.ok(limited.retry_after !== undefined && limited.retry_after >= 1)
assert.deepEqual(once.statuses.slice(-1), [429])
console.log(`429: retried after Retry-After (${waited} ms), statuses ${retries.statuses.join(', ')}; with retry: false, ScreeningApiError ${limited.code}, retry_after ${limited.retry_after} s`)

console.log('all checks passed')
