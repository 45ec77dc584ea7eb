import t from 'tap'
import { createUser } from '../../../src/admin/commands.js'
import { buildTestApp } from '../../helpers/app.js'
import { createJob, createScreens, createTenant, keyWithScopes, type ScreenInput } from '../../helpers/fixtures.js'

// GET /api/analytics/organization: the figures of a small organization worked out by hand
// (weighted, never an average of the jobs' averages), its filters, the single-job call's
// checks in its order, ETag and 304 from the selection's version.

const { app, prisma } = await buildTestApp(t, { env: { UPGRADE_URL: '/billing/upgrade' } })
const pro = await createTenant(prisma, { plan: 'pro' })
const other = await createTenant(prisma, { plan: 'pro' })
const second = await createUser(prisma, { organizationId: pro.organizationId, email: `second-${pro.organizationId}@example.test`, name: 'Second' })
const at = (iso: string): Date => new Date(iso)
const completed = (iso: string, score: number | null): ScreenInput => ({ status: 'completed', score, completedAt: at(iso), startedAt: at('2020-01-01T00:00:00Z') })
const rollup = async (query = '', headers: Record<string, string> = pro.auth) =>
  await app.inject({ url: `/api/analytics/organization${query === '' ? '' : `?${query}`}`, headers })

// Job a: one screen of 90. Job b: three of 10, 20, 30 and an unscored one. The mean of the
// jobs' means would be (90 + 20) / 2 = 55; the mean of the screens is 150 / 4 = 37.5.
const a = await createJob(prisma, pro)
await createScreens(prisma, a.id, [completed('2026-01-05T09:00:00Z', 90), { status: 'in_progress' }])
const b = await createJob(prisma, { ...pro, userId: second.id }, { status: 'paused' })
await createScreens(prisma, b.id, [completed('2026-01-05T10:00:00Z', 10), completed('2026-01-06T10:00:00Z', 20), completed('2026-01-12T10:00:00Z', 30), completed('2026-01-12T11:00:00Z', null), { status: 'expired' }])
const foreign = await createJob(prisma, other)
await createScreens(prisma, foreign.id, [completed('2026-01-05T09:00:00Z', 1), completed('2026-01-05T09:00:00Z', 1)])

t.test('the selected jobs\' screens as one job\'s: weighted, never an average of averages', async t => {
  const res = await rollup()
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    job_count: 2,
    average_score: 37.5,
    completion_rate: 71, // 5 of 7
    average_score_by_week: [
      { week: '2026-01-05', average_score: 40, count: 3 }, // (90 + 10 + 20) / 3
      { week: '2026-01-12', average_score: 30, count: 2 }, // the unscored one counted, not averaged
    ],
    interviews_by_status: { completed: 5, in_progress: 1, expired: 1 },
    total_interviews: 7,
  })
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.ok(res.headers['tzdata-version'])
  t.same((await rollup('', other.auth)).json().interviews_by_status, { completed: 2, in_progress: 0, expired: 0 }, 'the other organization counts its own only')
})

t.test('filters, zones and ranges', async t => {
  t.match((await rollup('job_status=paused')).json(), { job_count: 1, total_interviews: 5, average_score: 20 })
  t.match((await rollup('job_status=active&job_status=paused&job_status=active')).json(), { job_count: 2, total_interviews: 7 })
  t.match((await rollup('job_status=closed')).json(), { job_count: 0, total_interviews: 0, completion_rate: 0, average_score: null, average_score_by_week: [] })
  t.match((await rollup(`user_id=${second.id.toUpperCase()}`)).json(), { job_count: 1, total_interviews: 5 }, 'a recruiter\'s jobs, the id case-folded')
  t.match((await rollup(`user_id=${other.userId}`)).json(), { job_count: 0, total_interviews: 0 }, 'another organization\'s user: nothing')
  // 2026-01-05T09:00Z is Sunday 2026-01-04, 23:00 in Honolulu: the week before; 10:00Z is its Monday 00:00.
  t.same((await rollup('tz=Pacific/Honolulu')).json().average_score_by_week.map((w: { week: string }) => w.week), ['2025-12-29', '2026-01-05', '2026-01-12'])
  const ranged = (await rollup('from=2026-01-10&to=2026-01-25')).json()
  t.same(ranged.average_score_by_week, [
    { week: '2026-01-05', average_score: 40, count: 3 },
    { week: '2026-01-12', average_score: 30, count: 2 },
    { week: '2026-01-19', average_score: null, count: 0 },
  ], 'every week of the range, zero-filled')
  t.equal(ranged.total_interviews, 7, 'the totals describe the jobs whole')
})

// The range 2026-01-12..2026-01-18 spans one week: the previous period is 2026-01-05..01-11.
// There: 90, 10, 20 (mean 40); in the range 30 and an unscored one (mean 30): change −10.
t.test('compare=previous_period: the range\'s totals, the weeks before it aligned, the change', async t => {
  const res = await rollup('from=2026-01-12&to=2026-01-18&compare=previous_period')
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(Object.keys(body).slice(-3), ['period', 'previous', 'change'], 'after the answer\'s own keys')
  t.same(body.period, { from: '2026-01-12', to: '2026-01-18', completed: 2, average_score: 30 })
  t.same(body.previous, { from: '2026-01-05', to: '2026-01-11', completed: 3, average_score: 40, average_score_by_week: [{ week: '2026-01-05', average_score: 40, count: 3 }] })
  t.same(body.change, { completed: -1, average_score: -10 })
  // Ten days over two weeks: moved back two weeks, 2026-01-06 a Tuesday as 2026-01-20 is.
  const two = (await rollup('from=2026-01-20&to=2026-01-29&compare=previous_period')).json()
  t.same([two.previous.from, two.previous.to, two.previous.average_score_by_week.map((w: { week: string }) => w.week)], ['2026-01-06', '2026-01-15', ['2026-01-05', '2026-01-12']])
  t.same([two.period.completed, two.period.average_score, two.change], [0, null, { completed: -5, average_score: null }], 'no scored completion in the range: no mean, no change of it')
  t.notOk('period' in (await rollup('from=2026-01-12&to=2026-01-18')).json(), 'without compare: the answer as before')
  t.not(res.headers.etag, (await rollup('from=2026-01-12&to=2026-01-18')).headers.etag, 'its own ETag')
  const bare = await rollup('compare=previous_period')
  t.equal(bare.statusCode, 400, 'compare without a range')
  t.match(bare.json(), { code: 'invalid_request', details: [{ path: 'querystring/compare' }] })
  t.equal((await rollup('from=2026-01-12&to=2026-01-18&compare=last_year')).statusCode, 400, 'an unknown comparison')
})

t.test('the single-job call\'s checks, in its order', async t => {
  const cases: Array<[string, string, string]> = [
    ['an unknown job status', 'job_status=archived', 'querystring/job_status'],
    ['a malformed user id', 'user_id=bob', 'querystring/user_id'],
    ['an unknown zone', 'tz=Mars/Olympus', 'querystring/tz'],
    ['a backwards range', 'from=2026-02-01&to=2026-01-01', 'querystring/from'],
    ['from without to', 'from=2026-02-01', 'querystring/to'],
  ]
  for (const [name, query, path] of cases) {
    const res = await rollup(query)
    t.equal(res.statusCode, 400, name)
    t.equal(res.json().code, 'invalid_request', name)
    t.ok((res.json().details as Array<{ path: string }>).some(d => d.path.startsWith(path)), `${name}: ${res.body}`)
  }
  const free = await createTenant(prisma, { plan: 'free' })
  const res = await rollup('', free.auth)
  t.equal(res.statusCode, 403)
  t.same(res.json(), { error: 'Pro subscription required', code: 'upgrade_required', upgrade_url: '/billing/upgrade', request_id: res.headers['x-request-id'] })
  t.equal((await rollup('tz=Nowhere', free.auth)).statusCode, 400, 'a 400 before the plan\'s 403')
  const jobsOnly = await keyWithScopes(prisma, pro, ['jobs:read'])
  t.match((await rollup('tz=Nowhere', jobsOnly.auth)).json(), { code: 'insufficient_scope', required_scope: 'analytics:read' }, 'the scope before anything else')
  t.equal((await app.inject({ url: '/api/analytics/organization' })).statusCode, 401)
})

t.test('ETag and 304: unchanged while the selection and its jobs\' screens are', async t => {
  const query = 'tz=Europe/Berlin&job_status=active'
  const first = await rollup(query)
  const etag = first.headers.etag as string
  t.match(etag, /^"[A-Za-z0-9_-]+"$/)
  const again = await rollup(query, { ...pro.auth, 'if-none-match': etag })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
  t.equal((await rollup('tz=Europe/Berlin&job_status=active&job_status=active', { ...pro.auth, 'if-none-match': etag })).statusCode, 304, 'the same selection asked twice over')
  t.not((await rollup('tz=UTC&job_status=active')).headers.etag, etag, 'another zone: another ETag')
  await createScreens(prisma, b.id, [completed('2026-01-06T10:00:00Z', 1)])
  await createScreens(prisma, foreign.id, [completed('2026-01-06T10:00:00Z', 1)])
  t.equal((await rollup(query, { ...pro.auth, 'if-none-match': etag })).statusCode, 304, 'writes to an unselected job and another organization\'s: still 304')
  await prisma.job.update({ where: { id: b.id }, data: { status: 'active' } })
  const selected = await rollup(query, { ...pro.auth, 'if-none-match': etag })
  t.equal(selected.statusCode, 200, 'a job entering the selection: the new answer')
  t.equal(selected.json().job_count, 2)
  const etag2 = selected.headers.etag as string
  await createScreens(prisma, a.id, [{ status: 'expired' }])
  const changed = await rollup(query, { ...pro.auth, 'if-none-match': etag2 })
  t.equal(changed.statusCode, 200, 'a write to a selected job: the new answer')
  t.not(changed.headers.etag, etag2)
  await prisma.job.update({ where: { id: b.id }, data: { status: 'paused' } })
})
