import t from 'tap'
import { foldScreenStats } from '../../src/admin/screen-stats.js'
import { analyticsVersion } from '../../src/jobs/analytics/read.js'
import { jobsAnalyticsText, jobsAnalyticsVersions } from '../../src/jobs/dashboard/read-jobs-analytics.js'
import { zoneRules } from '../../src/zones/rules.js'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'
import { sleep } from '../helpers/sleep.js'

// ANALYTICS_CACHE_BYTES (src/jobs/analytics/answer-cache.ts): a question asked again is
// answered from the version of the job's figures; the answer kept is given only while that
// version is current, and only to a caller whose organization the job is in. Statements are
// counted from Prisma's query events, as in test/db/sql-per-request.test.ts.

const { app, prisma } = await buildTestApp(t, { env: { SUMMARY_FOLD_INTERVAL_MS: '0', WEBHOOK_WORKER: 'off' }, db: { logQueries: true } })
const sent: string[] = []
;(app.database.prisma as unknown as { $on: (e: 'query', cb: (e: { query: string }) => void) => void }).$on('query', e => { sent.push(e.query) })

const acme = await createTenant(prisma)
const globex = await createTenant(prisma)
const free = await createTenant(prisma, { plan: 'free' })
const job = await createJob(prisma, acme)
const monday = new Date('2026-03-02T10:00:00Z')
await createScreens(prisma, job.id, [{ status: 'completed', score: 70, completedAt: monday }, { status: 'in_progress' }])

interface Asked { status: number, body: string, etag: string | undefined, sql: string[] }
async function ask (auth: Record<string, string>, query = 'tz=Europe/Berlin', id = job.id): Promise<Asked> {
  await app.inject({ url: '/api/me', headers: auth }) // the caller looked up before counting
  sent.length = 0
  const res = await app.inject({ url: `/api/jobs/${id}/analytics?${query}`, headers: auth })
  return { status: res.statusCode, body: res.body, etag: res.headers.etag as string | undefined, sql: [...sent] }
}
const readsBins = (sql: string[]): boolean => sql.some(q => /job_completion|job_weekly_bins|completed_at/.test(q))

t.test('a question asked again: the kept answer, after the version alone', async t => {
  const first = await ask(acme.auth)
  t.equal(first.status, 200)
  t.ok(readsBins(first.sql), 'the first answer reads the figures')
  const again = await ask(acme.auth)
  t.equal(again.status, 200)
  t.equal(again.body, first.body, 'the same answer')
  t.equal(again.etag, first.etag, 'the same ETag')
  t.equal(again.sql.length, 1, 'one statement')
  t.notOk(readsBins(again.sql), 'the version only')
  const other = await ask(acme.auth, 'tz=America/New_York')
  t.ok(readsBins(other.sql), 'another zone is another question')
})

t.test('a change to the job\'s screens: the next answer is the new one, never the kept one', async t => {
  const before = await ask(acme.auth)
  t.equal(JSON.parse(before.body).total_interviews, 2)
  await createScreens(prisma, job.id, [{ status: 'completed', score: 90, completedAt: monday }])
  const after = await ask(acme.auth)
  t.equal(after.status, 200)
  const body = JSON.parse(after.body) as { total_interviews: number, interviews_by_status: { completed: number }, average_score_by_week: Array<{ week: string, count: number, average_score: number | null }> }
  t.equal(body.total_interviews, 3, 'the new screen counted')
  t.equal(body.interviews_by_status.completed, 2)
  t.same(body.average_score_by_week, [{ week: '2026-03-02', average_score: 80, count: 2 }], 'the week\'s average of 70 and 90')
  t.not(after.etag, before.etag)
  t.ok(readsBins(after.sql), 'the figures read again')
  await prisma.screen.updateMany({ where: { jobId: job.id, score: 90 }, data: { score: 50 } })
  t.same(JSON.parse((await ask(acme.auth)).body).average_score_by_week, [{ week: '2026-03-02', average_score: 60, count: 2 }], 'a changed score too')
})

t.test('an answer kept for one organization is never given to another', async t => {
  t.equal((await ask(acme.auth)).status, 200, 'kept')
  const stranger = await ask(globex.auth)
  t.equal(stranger.status, 404, 'another organization (Pro): 404')
  t.notMatch(stranger.body, /average_score_by_week/)
  t.equal((await ask(free.auth)).status, 403, 'a free organization: 403 upgrade_required')
  // Moved to another organization: its figures are unchanged, its owner is not.
  const moved = await createJob(prisma, acme)
  await createScreens(prisma, moved.id, [{ status: 'completed', score: 10, completedAt: monday }])
  const before = await ask(acme.auth, 'tz=UTC', moved.id)
  t.equal(before.status, 200)
  await prisma.job.update({ where: { id: moved.id }, data: { organizationId: globex.organizationId, userId: globex.userId } })
  t.equal((await ask(acme.auth, 'tz=UTC', moved.id)).status, 404, 'its former organization: 404')
  const after = await ask(globex.auth, 'tz=UTC', moved.id)
  t.equal(after.status, 200, 'its new one: the answer')
  t.same(JSON.parse(after.body).average_score_by_week, [{ week: '2026-03-02', average_score: 10, count: 1 }], 'its figures')
  t.equal(after.body, before.body, 'the same figures as before the move')
})

t.test('ANALYTICS_CACHE_BYTES=0: nothing kept; an answer larger than the bound is not kept either', async t => {
  for (const bytes of ['0', '64']) {
    const { app: uncached, prisma: db } = await buildTestApp(t, { env: { SUMMARY_FOLD_INTERVAL_MS: '0', WEBHOOK_WORKER: 'off', ANALYTICS_CACHE_BYTES: bytes }, db: { logQueries: true } })
    const queries: string[] = []
    ;(uncached.database.prisma as unknown as { $on: (e: 'query', cb: (e: { query: string }) => void) => void }).$on('query', e => { queries.push(e.query) })
    const tenant = await createTenant(db)
    const own = await createJob(db, tenant)
    await createScreens(db, own.id, [{ status: 'completed', score: 70, completedAt: monday }])
    const url = `/api/jobs/${own.id}/analytics`
    await uncached.inject({ url: '/api/me', headers: tenant.auth })
    await sleep(20) // the unawaited last_used_at write
    const first = await uncached.inject({ url, headers: tenant.auth })
    t.equal(first.statusCode, 200)
    queries.length = 0
    const again = await uncached.inject({ url, headers: tenant.auth })
    t.equal(again.statusCode, 200)
    t.equal(again.body, first.body, `${bytes}: the same answer`)
    t.equal(queries.length, 1, `${bytes}: one statement`)
    t.ok(readsBins(queries), `${bytes}: the figures read again`)
  }
})

// The batch and the rollup keep answers in the same cache: a batch's entries are the single
// job's answers, the rollup's is its question's (the organization named in it).
const batchUrl = (ids: string[], query = 'tz=Europe/Berlin'): string => `/api/analytics/jobs?${ids.map(id => `job_id=${id}`).join('&')}&${query}`
async function askUrl (auth: Record<string, string>, url: string): Promise<Asked> {
  await app.inject({ url: '/api/me', headers: auth })
  sent.length = 0
  const res = await app.inject({ url, headers: auth })
  return { status: res.statusCode, body: res.body, etag: res.headers.etag as string | undefined, sql: [...sent] }
}

t.test('a batch: the kept entries given where the version is the same, at most 2 statements', async t => {
  const second = await createJob(prisma, acme)
  await createScreens(prisma, second.id, [{ status: 'completed', score: 40, completedAt: monday }])
  const single = await ask(acme.auth, 'tz=Europe/Berlin')
  const first = await askUrl(acme.auth, batchUrl([job.id, second.id]))
  t.equal(first.status, 200)
  t.equal(first.sql.length, 1, 'one statement')
  t.match(first.body, `{"job_id":"${job.id}","analytics":${single.body}}`, 'the single answer kept is the entry')
  const again = await askUrl(acme.auth, batchUrl([job.id, second.id]))
  t.equal(again.body, first.body, 'the same answer')
  t.equal(again.sql.length, 1, 'one statement')
  t.notOk(readsBins(again.sql), 'every entry kept: the versions only')
  await createScreens(prisma, second.id, [{ status: 'completed', score: 60, completedAt: monday }])
  const changed = await askUrl(acme.auth, batchUrl([job.id, second.id]))
  t.equal(changed.sql.length, 2, 'the versions, then the figures of the jobs whose version moved')
  t.match(JSON.parse(changed.body), { jobs: [JSON.parse(first.body).jobs[0], { job_id: second.id, analytics: { average_score_by_week: [{ week: '2026-03-02', count: 2, average_score: 50 }] } }] }, 'the changed job computed again, the other kept')
  t.equal((await askUrl(globex.auth, batchUrl([job.id]))).body, `{"jobs":[{"job_id":"${job.id}","error":{"code":"not_found","message":"No such job in the caller's organization."}}]}`, 'never to another organization')

  // In the statement: a job whose kept version is current has its figures' version and counts read, not its bins.
  const options = { rules: { set: zoneRules().id, zone: 'Europe/Berlin' } }
  const [computed] = await app.database.read(async reader => await jobsAnalyticsText(reader, acme.organizationId, [second.id], options))
  t.equal(computed!.known, false)
  t.not(computed!.found!.bins, null, 'no kept version: the bins read')
  const [known] = await app.database.read(async reader => await jobsAnalyticsText(reader, acme.organizationId, [second.id], options, [computed!.found!.version]))
  t.equal(known!.known, true)
  t.equal(known!.found!.bins, null, 'the kept version current: the bins not read')
  t.same(known!.found!.byStatus, computed!.found!.byStatus)
  const [stale] = await app.database.read(async reader => await jobsAnalyticsText(reader, acme.organizationId, [second.id], options, ['1:1:1']))
  t.same(stale, computed, 'another version: read as with none')
})

t.test('a batch\'s whole answer kept: given again after the versions alone, never after a write nor to another organization', async t => {
  const third = await createJob(prisma, acme)
  await createScreens(prisma, third.id, [{ status: 'completed', score: 30, completedAt: monday }])
  const ids = [third.id, job.id]
  const first = await askUrl(acme.auth, batchUrl(ids))
  const again = await askUrl(acme.auth, batchUrl(ids))
  t.equal(again.body, first.body, 'the same bytes')
  t.equal(again.etag, first.etag)
  t.same([again.sql.length, readsBins(again.sql)], [1, false], 'the versions only')
  const reversed = await askUrl(acme.auth, batchUrl([...ids].reverse()))
  t.same(JSON.parse(reversed.body).jobs, [...JSON.parse(first.body).jobs].reverse(), 'another order: another question, its entries in that order')
  const foreign = await askUrl(globex.auth, batchUrl(ids))
  t.equal(foreign.body, `{"jobs":[${ids.map(id => `{"job_id":"${id}","error":{"code":"not_found","message":"No such job in the caller's organization."}}`).join(',')}]}`, 'the same ids from another organization: nothing of them')
  await createScreens(prisma, third.id, [{ status: 'completed', score: 90, completedAt: monday }])
  const changed = await askUrl(acme.auth, batchUrl(ids))
  t.not(changed.etag, first.etag)
  t.match(JSON.parse(changed.body), { jobs: [{ job_id: third.id, analytics: { average_score_by_week: [{ week: '2026-03-02', count: 2, average_score: 60 }] } }, JSON.parse(first.body).jobs[1]] }, 'a write to one of its jobs: that entry computed again')
  const afterWrite = await askUrl(acme.auth, batchUrl(ids))
  t.same([afterWrite.body, afterWrite.sql.length], [changed.body, 1], 'and the new answer kept in its turn')
})

t.test('a kept batch is given whole even where one of its entries was dropped from the cache', async t => {
  // Two jobs, one with a long answer (a completion a week for 100 weeks), one short; a budget
  // that holds the batch and the short entry but not the long one as well: keeping the batch
  // drops the long entry (least recently kept). The batch asked again: its kept body, no bins.
  const seed = async (p: typeof prisma): Promise<{ tenant: Awaited<ReturnType<typeof createTenant>>, ids: string[] }> => {
    const tenant = await createTenant(p)
    const long = await createJob(p, tenant)
    await createScreens(p, long.id, Array.from({ length: 100 }, (_, i) => ({ status: 'completed' as const, score: i, completedAt: new Date(Date.UTC(2024, 0, 1 + 7 * i, 12)) })))
    const short = await createJob(p, tenant)
    await createScreens(p, short.id, [{ status: 'completed', score: 70, completedAt: monday }])
    return { tenant, ids: [long.id, short.id] }
  }
  const sized = await seed(prisma)
  const batch = await askUrl(sized.tenant.auth, batchUrl(sized.ids))
  const short = await askUrl(sized.tenant.auth, `/api/jobs/${sized.ids[1]}/analytics?tz=Europe/Berlin`)
  const long = await askUrl(sized.tenant.auth, `/api/jobs/${sized.ids[0]}/analytics?tz=Europe/Berlin`)
  t.ok(long.body.length > 4000, 'the long answer is long')
  // Each kept entry costs its bytes and twice its question and version (well under 600 here).
  const budget = batch.body.length + short.body.length + 1200
  const small = await buildTestApp(t, { env: { SUMMARY_FOLD_INTERVAL_MS: '0', WEBHOOK_WORKER: 'off', ANALYTICS_CACHE_BYTES: String(budget) }, db: { logQueries: true } })
  const statements: string[] = []
  ;(small.app.database.prisma as unknown as { $on: (e: 'query', cb: (e: { query: string }) => void) => void }).$on('query', e => { statements.push(e.query) })
  const { tenant, ids } = await seed(small.prisma)
  const askSmall = async (): Promise<{ body: string, sql: string[] }> => {
    await small.app.inject({ url: '/api/me', headers: tenant.auth })
    statements.length = 0
    const res = await small.app.inject({ url: batchUrl(ids), headers: tenant.auth })
    return { body: res.body, sql: [...statements] }
  }
  const computed = await askSmall()
  t.ok(readsBins(computed.sql), 'first asked: computed')
  const kept = await askSmall()
  t.equal(kept.body, computed.body)
  t.same([kept.sql.length, readsBins(kept.sql)], [1, false], 'the long entry dropped, the batch kept: the versions alone')
})

t.test('the batch\'s versions, read at once, are each job\'s own version (the single job\'s read)', async t => {
  const empty = await createJob(prisma, acme)
  const busy = await createJob(prisma, acme)
  await createScreens(prisma, busy.id, [{ status: 'completed', score: 10, completedAt: monday }, { status: 'expired' }])
  await foldScreenStats(prisma) // busy's deltas into its summary rows, then one delta more
  await createScreens(prisma, busy.id, [{ status: 'in_progress' }])
  const fresh = await createJob(prisma, acme)
  await createScreens(prisma, fresh.id, [{ status: 'completed', score: 20, completedAt: monday }]) // deltas only: after the fold
  const elsewhere = await createJob(prisma, globex)
  const ids = [busy.id, elsewhere.id, empty.id, job.id, '00000000-0000-4000-8000-000000000000', fresh.id]
  const { versions } = await app.database.read(async reader => await jobsAnalyticsVersions(reader, acme.organizationId, ids))
  const single = await Promise.all(ids.map(async id => (await app.database.read(async reader => await analyticsVersion(reader, acme.organizationId, id)))?.version ?? null))
  t.same(versions, single)
  t.same(versions.map(v => v === null), [false, true, false, false, true, false], 'another organization\'s and a missing job: none')
  t.equal(versions[2], '0:0:0', 'a job with no screens')
  const twice = await app.database.read(async reader => await jobsAnalyticsVersions(reader, acme.organizationId, [fresh.id, busy.id, fresh.id]))
  t.same(twice.versions, [single[5], single[0], single[5]], 'an id asked twice: its version twice, in place')
})

t.test('a rollup: the kept answer after the selection\'s version alone, for its organization only', async t => {
  const url = '/api/analytics/organization?tz=Europe/Berlin'
  const first = await askUrl(acme.auth, url)
  t.equal(first.status, 200)
  t.ok(readsBins(first.sql), 'the first answer reads the figures')
  const again = await askUrl(acme.auth, url)
  t.equal(again.body, first.body, 'the same answer')
  t.equal(again.etag, first.etag)
  t.equal(again.sql.length, 1, 'one statement')
  t.notOk(readsBins(again.sql), 'the version only')
  t.not((await askUrl(globex.auth, url)).body, first.body, 'another organization: its own rollup')
  await createScreens(prisma, job.id, [{ status: 'expired' }])
  const changed = await askUrl(acme.auth, url)
  t.equal(JSON.parse(changed.body).total_interviews, JSON.parse(first.body).total_interviews + 1, 'a write: the new answer')
  t.equal(changed.sql.length, 2, 'the version, then the figures')
})
