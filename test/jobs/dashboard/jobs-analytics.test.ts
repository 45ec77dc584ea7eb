import { randomUUID } from 'node:crypto'
import t from 'tap'
import { MAX_BATCH_JOBS } from '../../../src/schemas/dashboard.js'
import { buildTestApp, sameDatabaseApp } from '../../helpers/app.js'
import { createJob, createScreens, createTenant, keyWithScopes, type ScreenInput } from '../../helpers/fixtures.js'
import { sleep } from '../../helpers/sleep.js'

// GET /api/analytics/jobs: each entry the single-job answer's own bytes, another
// organization's job indistinguishable from a missing one, the checks of the single-job call
// in its order, ETag and 304, and one snapshot for the whole answer. ANALYTICS_SCREENS_READ_MAX
// is 3, so that jobs of both kinds (bins from screens, bins from summaries) are in a batch.

const env = { ANALYTICS_SCREENS_READ_MAX: '3', UPGRADE_URL: '/billing/upgrade' }
const base = await buildTestApp(t, { env })
const { app, prisma } = base
// The single answers compared with, from an instance that keeps none (the app may give a
// batch's entry kept as its single answer: the same text, not a second computation).
const computed = await sameDatabaseApp(t, base, { ...env, ANALYTICS_CACHE_BYTES: '0' })
const pro = await createTenant(prisma, { plan: 'pro' })
const other = await createTenant(prisma, { plan: 'pro' })
const at = (iso: string): Date => new Date(iso)
const completed = (iso: string, score: number | null): ScreenInput => ({ status: 'completed', score, completedAt: at(iso), startedAt: at('2020-01-01T00:00:00Z') })

const batch = async (ids: string[], query = '', headers: Record<string, string> = pro.auth) =>
  await app.inject({ url: `/api/analytics/jobs?${[...ids.map(id => `job_id=${id}`), ...(query === '' ? [] : [query])].join('&')}`, headers })
const single = async (id: string, query = '', headers: Record<string, string> = pro.auth) =>
  await computed.inject({ url: `/api/jobs/${id}/analytics${query === '' ? '' : `?${query}`}`, headers })

async function jobWith (screens: ScreenInput[], tenant = pro): Promise<string> {
  const job = await createJob(prisma, tenant)
  await createScreens(prisma, job.id, screens)
  return job.id
}

const small = await jobWith([completed('2026-01-05T00:30:00Z', 80), completed('2026-01-11T23:30:00Z', 61.25), { status: 'expired' }])
const large = await jobWith([
  ...Array.from({ length: 12 }, (_, i) => completed(`2026-0${1 + (i % 3)}-0${1 + (i % 7)}T0${i % 10}:15:00Z`, i % 4 === 0 ? null : 8 * i + 0.5)),
  { status: 'in_progress' }, { status: 'in_progress' },
])
const empty = await jobWith([])
const foreign = await jobWith([completed('2026-01-06T10:00:00Z', 99)], other)
const missing = randomUUID()

t.test('each entry is the single-job answer, byte for byte, in the order asked', async t => {
  for (const query of ['', 'tz=Europe/Berlin', 'tz=America/New_York&from=2025-12-20&to=2026-03-10', 'tz=Asia/Kolkata&from=2026-01-07&to=2026-01-07', 'tz=America/New_York&from=2026-01-20&to=2026-03-10&compare=previous_period']) {
    const res = await batch([large, small, empty], query)
    t.equal(res.statusCode, 200, query)
    t.equal(res.headers['tzdata-version'], (await single(small, query)).headers['tzdata-version'])
    const want = `{"jobs":[${await Promise.all([large, small, empty].map(async id => `{"job_id":"${id}","analytics":${(await single(id, query)).body}}`)).then(parts => parts.join(','))}]}`
    t.equal(res.body, want, `${query}: the entries are the single answers`)
  }
})

// The small job's two completions (80 and 61.25) are in the week of 2026-01-05: the week
// before the range 2026-01-12..18. The batch's entry is the single answer (above).
t.test('compare=previous_period on the single job and the batch', async t => {
  const res = await single(small, 'from=2026-01-12&to=2026-01-18&compare=previous_period')
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    average_score_by_week: [{ week: '2026-01-12', average_score: null, count: 0 }],
    total_interviews: 3,
    period: { from: '2026-01-12', to: '2026-01-18', completed: 0, average_score: null },
    previous: { from: '2026-01-05', to: '2026-01-11', completed: 2, average_score: 70.625, average_score_by_week: [{ week: '2026-01-05', average_score: 70.625, count: 2 }] },
    change: { completed: -2, average_score: null },
  })
  const plain = await single(small, 'from=2026-01-12&to=2026-01-18')
  t.notOk('period' in plain.json(), 'without compare, the answer as before')
  t.not(res.headers.etag, plain.headers.etag, 'and another ETag')
  t.equal(res.body.slice(0, plain.body.length - 1), plain.body.slice(0, -1), 'the same answer, the comparison after it')
  for (const answer of [await single(small, 'compare=previous_period'), await batch([small], 'compare=previous_period')]) {
    t.equal(answer.statusCode, 400, 'compare without a range')
    t.match(answer.json(), { code: 'invalid_request', details: [{ path: 'querystring/compare' }] })
  }
  const free = await createTenant(prisma, { plan: 'free' })
  t.equal((await single(small, 'compare=previous_period', free.auth)).statusCode, 400, 'a 400 before the plan\'s 403')
})

t.test('another organization\'s job and a missing one get the same entry; duplicates are answered once', async t => {
  const res = await batch([small, foreign, missing, small.toUpperCase(), missing])
  t.equal(res.statusCode, 200)
  const { jobs } = res.json() as { jobs: Array<{ job_id: string, error?: unknown }> }
  t.same(jobs.map(j => j.job_id), [small, foreign, missing], 'in the order of first mention, case folded')
  const entry = (id: string): string => JSON.stringify(jobs.find(j => j.job_id === id)).replace(id, '<id>')
  t.equal(entry(foreign), entry(missing), 'byte-identical but for the id')
  t.same(jobs[1], { job_id: foreign, error: { code: 'not_found', message: 'No such job in the caller\'s organization.' } })
  const foreignOnly = await batch([foreign])
  const missingOnly = await batch([missing])
  t.equal(foreignOnly.body.replace(foreign, '<id>'), missingOnly.body.replace(missing, '<id>'))
  t.equal((await batch([foreign], '', other.auth)).json().jobs[0].analytics.total_interviews, 1, 'its own organization sees it')
})

t.test('the single-job call\'s checks, in its order', async t => {
  const ids = (n: number): string[] => Array.from({ length: n }, () => randomUUID())
  const cases: Array<[string, string, number, string]> = [
    ['no id', '/api/analytics/jobs', 400, 'querystring'],
    ['no id, a zone', '/api/analytics/jobs?tz=UTC', 400, 'querystring'],
    [`${MAX_BATCH_JOBS + 1} ids`, `/api/analytics/jobs?${ids(MAX_BATCH_JOBS + 1).map(id => `job_id=${id}`).join('&')}`, 400, 'querystring/job_id'],
    ['a malformed id', `/api/analytics/jobs?job_id=${small}&job_id=not-a-uuid`, 400, 'querystring/job_id/1'],
    ['an unknown zone', `/api/analytics/jobs?job_id=${small}&tz=Mars/Olympus`, 400, 'querystring/tz'],
    ['a backwards range', `/api/analytics/jobs?job_id=${small}&from=2026-02-01&to=2026-01-01`, 400, 'querystring/from'],
    ['from without to', `/api/analytics/jobs?job_id=${small}&from=2026-02-01`, 400, 'querystring/to'],
  ]
  for (const [name, url, status, path] of cases) {
    const res = await app.inject({ url, headers: pro.auth })
    t.equal(res.statusCode, status, name)
    t.equal(res.json().code, 'invalid_request', name)
    t.ok((res.json().details as Array<{ path: string }>).some(d => d.path.startsWith(path)), `${name}: ${res.body}`)
  }
  t.equal((await batch(ids(MAX_BATCH_JOBS))).statusCode, 200, `${MAX_BATCH_JOBS} ids are fine`)

  const free = await createTenant(prisma, { plan: 'free' })
  const freeJob = await jobWith([completed('2026-01-06T10:00:00Z', 50)], free)
  for (const id of [freeJob, small, missing]) {
    const res = await batch([id], '', free.auth)
    t.equal(res.statusCode, 403)
    t.same(res.json(), { error: 'Pro subscription required', code: 'upgrade_required', upgrade_url: '/billing/upgrade', request_id: res.headers['x-request-id'] })
  }
  t.equal((await batch(['bad'], '', free.auth)).statusCode, 400, 'a 400 before the plan\'s 403')
  const jobsOnly = await keyWithScopes(prisma, pro, ['jobs:read'])
  const scoped = await batch(['bad'], '', jobsOnly.auth)
  t.equal(scoped.statusCode, 403)
  t.match(scoped.json(), { code: 'insufficient_scope', required_scope: 'analytics:read' }, 'the scope before anything else')
  t.equal((await app.inject({ url: `/api/analytics/jobs?job_id=${small}` })).statusCode, 401)
})

t.test('ETag and 304: unchanged while none of the jobs changed, whatever else did', async t => {
  const ids = [small, large, missing]
  const first = await batch(ids, 'tz=Europe/Berlin')
  const etag = first.headers.etag as string
  t.match(etag, /^"[A-Za-z0-9_-]+"$/)
  const again = await batch(ids, 'tz=Europe/Berlin', { ...pro.auth, 'if-none-match': etag })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
  t.equal(again.headers.etag, etag)
  t.not((await batch(ids, 'tz=UTC')).headers.etag, etag, 'another zone: another ETag')
  t.not((await batch([large, small, missing], 'tz=Europe/Berlin')).headers.etag, etag, 'another order: another ETag')
  await createScreens(prisma, empty, [completed('2026-01-06T10:00:00Z', 1)])
  await createScreens(prisma, foreign, [completed('2026-01-06T10:00:00Z', 1)])
  t.equal((await batch(ids, 'tz=Europe/Berlin', { ...pro.auth, 'if-none-match': etag })).statusCode, 304, 'writes to other jobs, and to another organization\'s: still 304')
  await createScreens(prisma, large, [{ status: 'expired' }])
  const changed = await batch(ids, 'tz=Europe/Berlin', { ...pro.auth, 'if-none-match': etag })
  t.equal(changed.statusCode, 200, 'a write to one of the jobs: the new answer')
  t.not(changed.headers.etag, etag)
  t.equal(changed.json().jobs[1].analytics.interviews_by_status.expired, 1)
})

t.test('one snapshot: a screen moved between two jobs while batches are read is in exactly one of them', async t => {
  const a = await jobWith(Array.from({ length: 6 }, (_, i) => completed(`2026-01-0${1 + i}T10:00:00Z`, 10 * i)))
  const b = await jobWith([completed('2026-01-09T10:00:00Z', 40)])
  // A writer in its own connections (the fixtures' client; on the server, a pool apart from
  // the app's), as the recruiters' app: each transaction moves one screen from one job to the
  // other, so that the two jobs' total never changes.
  const move = async (from: string, to: string): Promise<void> => {
    await prisma.$executeRaw`UPDATE screens SET job_id = ${to}::uuid WHERE id = (SELECT id FROM screens WHERE job_id = ${from}::uuid ORDER BY id LIMIT 1)`
  }
  const writing = { on: true }
  const moves = (async () => {
    let n = 0
    while (writing.on) {
      await move(n % 7 < 3 ? a : b, n % 7 < 3 ? b : a)
      n++
      // Turns for the reads: the embedded database answers within one task of the event loop.
      await sleep(1)
    }
    return n
  })()
  const totals = new Set<number>()
  for (let i = 0; i < 60; i++) {
    const { jobs } = (await batch([a, b])).json() as { jobs: Array<{ analytics: { total_interviews: number, interviews_by_status: { completed: number } } }> }
    totals.add(jobs[0]!.analytics.total_interviews + jobs[1]!.analytics.total_interviews)
    totals.add(jobs[0]!.analytics.interviews_by_status.completed + jobs[1]!.analytics.interviews_by_status.completed)
    await sleep(1)
  }
  writing.on = false
  const made = await moves
  t.ok(made >= 20, `${made} moves committed meanwhile`)
  t.same([...totals], [7], 'every answer saw the two jobs at one instant')
})
