import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'

const { app, prisma } = await buildTestApp(t)
const acme = await createTenant(prisma, { plan: 'pro' })
const globex = await createTenant(prisma, { plan: 'pro' })
const get = (id: string, headers: Record<string, string> = acme.auth) => app.inject({ url: `/api/jobs/${id}`, headers })
const day = (n: number) => new Date(Date.UTC(2026, 0, 5 + n, 9, 30))

t.test('200 with every field of the Job object, exact names and types', async t => {
  const job = await createJob(prisma, acme, { title: 'Engineer', questions: 3, logoUrl: 'https://cdn.example/logo.png', brandColor: '#12ab9F', createdAt: new Date('2026-01-05T09:30:00.123Z') })
  await createScreens(prisma, job.id, [
    { status: 'completed', score: 80, completedAt: day(1) },
    { status: 'completed', score: 65.5, completedAt: day(2) },
    { status: 'completed', score: null, completedAt: day(3) },
    { status: 'in_progress' },
    { status: 'expired', score: 10 },
  ])
  // Another organization's job with screens of its own must not leak into the counts.
  const foreign = await createJob(prisma, globex, { questions: 7 })
  await createScreens(prisma, foreign.id, [{ status: 'completed', score: 1, completedAt: day(1) }])

  const res = await get(job.id)
  t.equal(res.statusCode, 200)
  const stored = await prisma.job.findUniqueOrThrow({ where: { id: job.id } })
  t.same(res.json(), {
    id: job.id,
    user_id: acme.userId,
    title: 'Engineer',
    company_name: 'Test Company',
    description: 'A job for tests.',
    status: 'active',
    slug: job.slug,
    share_token: job.shareToken,
    logo_url: 'https://cdn.example/logo.png',
    brand_color: '#12ab9F',
    show_service_branding: true,
    eu_candidates_allowed: true,
    question_count: 3,
    interview_count: 5,
    average_score: (80 + 65.5) / 2,
    created_at: '2026-01-05T09:30:00.123Z',
    updated_at: stored.updatedAt.toISOString(),
  })
  t.strictSame(Object.keys(res.json()), ['id', 'user_id', 'title', 'company_name', 'description', 'status', 'slug', 'share_token', 'logo_url', 'brand_color', 'show_service_branding', 'eu_candidates_allowed', 'question_count', 'interview_count', 'average_score', 'created_at', 'updated_at'], 'field order as in the spec')
})

t.test('average_score is null with no completed screen, and with completed screens not yet scored', async t => {
  const none = await createJob(prisma, acme)
  t.equal((await get(none.id)).json().average_score, null)
  t.equal((await get(none.id)).json().interview_count, 0)
  const unscored = await createJob(prisma, acme)
  await createScreens(prisma, unscored.id, [{ status: 'completed', score: null, completedAt: day(1) }, { status: 'expired', score: 50 }])
  const body = (await get(unscored.id)).json()
  t.equal(body.average_score, null, 'expired screens with scores do not count')
  t.equal(body.interview_count, 2)
})

t.test('average_score is not rounded', async t => {
  const job = await createJob(prisma, acme)
  await createScreens(prisma, job.id, [10, 20, 20].map(score => ({ status: 'completed' as const, score, completedAt: day(1) })))
  t.equal((await get(job.id)).json().average_score, 50 / 3)
})

t.test('branding fields are null unless set', async t => {
  const job = await createJob(prisma, acme)
  t.match((await get(job.id)).json(), { logo_url: null, brand_color: null })
})

t.test('another organization\'s job is exactly a missing job: same status, headers and body', async t => {
  const foreign = await createJob(prisma, globex)
  const a = await get(foreign.id)
  const b = await get(randomUUID())
  t.equal(a.statusCode, 404)
  t.equal(b.statusCode, 404)
  const strip = (r: typeof a) => {
    // Per-request values: the date, the id, and the caller's rate-limit counters.
    const { date: _d, 'x-request-id': _r, 'x-ratelimit-remaining': _rem, 'x-ratelimit-reset': _res, ...headers } = r.headers
    const { request_id: _id, ...body } = r.json()
    return { headers, body }
  }
  t.same(strip(a), strip(b))
  t.same(strip(a).body, { error: 'Job not found', code: 'not_found' })
  t.equal(a.body.length, b.body.length, 'same length: the request ids are the same length')
  t.equal((await get(foreign.id, globex.auth)).statusCode, 200, 'its own organization sees it')
})

t.test('checks run in order: 401, then 400, then 404', async t => {
  t.equal((await app.inject({ url: '/api/jobs/not-a-uuid' })).statusCode, 401, 'no credential beats a bad id')
  const bad = await get('not-a-uuid')
  t.equal(bad.statusCode, 400)
  t.same(bad.json().details, [{ path: 'params/jobId', message: 'must match format "uuid"' }])
  t.equal(bad.json().code, 'invalid_request')
})

t.test('odd path values get a documented 4xx, never a 5xx', async t => {
  const cases: Array<[string, number, string]> = [
    ['x'.repeat(37), 400, 'invalid_request'],
    ['a'.repeat(501), 414, 'uri_too_long'],
    ['%ZZ', 400, 'invalid_request'],
    ['%E2%9C%93', 400, 'invalid_request'],
    [encodeURIComponent('職務'), 400, 'invalid_request'],
    ['%00', 400, 'invalid_request'],
    ['urn:uuid:00000000-0000-0000-0000-000000000000', 400, 'invalid_request'],
    ['00000000-0000-0000-0000-000000000000', 404, 'not_found'],
    [randomUUID().toUpperCase(), 404, 'not_found'],
  ]
  for (const [segment, status, code] of cases) {
    const res = await get(segment)
    t.equal(res.statusCode, status, `${segment.slice(0, 40)}: ${status}`)
    t.equal(res.json().code, code)
    t.equal(res.json().request_id, res.headers['x-request-id'])
  }
})

t.test('an upper-case UUID finds the job (UUIDs are case-insensitive)', async t => {
  const job = await createJob(prisma, acme)
  const res = await get(job.id.toUpperCase())
  t.equal(res.statusCode, 200)
  t.equal(res.json().id, job.id)
})
