import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createScreens, createTenant, type ScreenInput } from '../helpers/fixtures.js'
import { clientReader } from '../../src/db/sql-reader.js'
import { inZone } from '../helpers/zones.js'

const { app, prisma } = await buildTestApp(t, { env: { UPGRADE_URL: '/billing/upgrade' } })
const pro = await createTenant(prisma, { plan: 'pro' })
const other = await createTenant(prisma, { plan: 'pro' })
const analytics = (jobId: string, query = '', headers: Record<string, string> = pro.auth) =>
  app.inject({ url: `/api/jobs/${jobId}/analytics${query}`, headers })
const at = (iso: string) => new Date(iso)
const completed = (iso: string, score: number | null = 50): ScreenInput => ({ status: 'completed', score, completedAt: at(iso), startedAt: at('2020-01-01T00:00:00Z') })

async function jobWith (screens: ScreenInput[], tenant = pro) {
  const job = await createJob(prisma, tenant)
  await createScreens(prisma, job.id, screens)
  return job
}
const weeks = async (screens: ScreenInput[], query = '') =>
  ((await analytics((await jobWith(screens)).id, query)).json().average_score_by_week as Array<{ week: string, count: number }>).map(b => [b.week, b.count])

t.test('the analytics object', async t => {
  const job = await jobWith([
    completed('2026-01-06T10:00:00Z', 80),
    completed('2026-01-07T10:00:00Z', 60),
    completed('2026-01-08T10:00:00Z', null),
    completed('2026-01-20T10:00:00Z', null),
    { status: 'in_progress' },
    { status: 'expired', score: 5 },
    { status: 'expired' },
  ])
  const res = await analytics(job.id)
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    completion_rate: 57, // 4 of 7 = 57.14
    average_score_by_week: [
      { week: '2026-01-05', average_score: 70, count: 3 },
      { week: '2026-01-19', average_score: null, count: 1 },
    ],
    interviews_by_status: { completed: 4, in_progress: 1, expired: 2 },
    total_interviews: 7,
  })
})

t.test('the queries are scoped to the organization: another one gets nothing for the same job', async t => {
  const { jobAnalytics } = await import('../../src/jobs/analytics/read.js')
  const job = await jobWith([completed('2026-01-06T10:00:00Z', 99), { status: 'expired' }])
  const { version, ...figures } = (await jobAnalytics(clientReader(prisma), pro.organizationId, job.id, inZone('UTC')))!
  t.same(figures, { byStatus: { completed: 1, in_progress: 0, expired: 1 }, weeks: [{ week: '2026-01-05', count: 1, averageScore: 99 }] }, 'its organization sees its screens')
  t.match(version, /^\d+:\d+:-?\d+$/, 'and their version: changes:time:hash')
  t.equal(await jobAnalytics(clientReader(prisma), other.organizationId, job.id, inZone('UTC')), null, 'another sees no counts and no job')
})

t.test('a job without screens: zeros, all three keys, no bins', async t => {
  const res = await analytics((await jobWith([])).id)
  t.same(res.json(), { completion_rate: 0, average_score_by_week: [], interviews_by_status: { completed: 0, in_progress: 0, expired: 0 }, total_interviews: 0 })
})

t.test('completion rate rounds halves up', async t => {
  const job = await jobWith([completed('2026-01-06T10:00:00Z'), ...Array.from({ length: 7 }, () => ({ status: 'in_progress' as const }))])
  t.equal((await analytics(job.id)).json().completion_rate, 13, '1 of 8 = 12.5 -> 13')
})

t.test('week boundaries in UTC: Sunday 23:59:59.999 and Monday 00:00 are different weeks', async t => {
  t.same(await weeks([completed('2026-01-11T23:59:59.999Z'), completed('2026-01-12T00:00:00.000Z')]), [['2026-01-05', 1], ['2026-01-12', 1]])
})

t.test('tz=Europe/Berlin: Sunday 23:30 UTC is already Monday in Berlin', async t => {
  const screens = [completed('2026-01-11T23:30:00Z')]
  t.same(await weeks(screens), [['2026-01-05', 1]], 'UTC')
  t.same(await weeks(screens, '?tz=Europe/Berlin'), [['2026-01-12', 1]], 'Berlin')
})

t.test('America/New_York across both daylight-saving changes', async t => {
  // Spring forward on Sunday 2026-03-08: Monday 03-09 00:00 EDT is 04:00Z (EST would say 05:00Z).
  t.same(await weeks([completed('2026-03-09T03:59:59.999Z'), completed('2026-03-09T04:30:00Z')], '?tz=America/New_York'), [['2026-03-02', 1], ['2026-03-09', 1]])
  // Fall back on Sunday 2026-11-01: Monday 11-02 00:00 EST is 05:00Z (EDT would say 04:00Z).
  t.same(await weeks([completed('2026-11-02T04:30:00Z'), completed('2026-11-02T05:00:00Z')], '?tz=America/New_York'), [['2026-10-26', 1], ['2026-11-02', 1]])
})

t.test('Australia/Lord_Howe: the 30-minute daylight-saving shift', async t => {
  // DST ends Sunday 2026-04-05 (+11 -> +10:30): Monday 04-06 00:00 is 2026-04-05T13:30Z.
  t.same(await weeks([completed('2026-04-05T13:15:00Z'), completed('2026-04-05T13:30:00Z')], '?tz=Australia/Lord_Howe'), [['2026-03-30', 1], ['2026-04-06', 1]])
  // DST starts Sunday 2026-10-04 (+10:30 -> +11): Monday 10-05 00:00 is 2026-10-04T13:00Z.
  t.same(await weeks([completed('2026-10-04T12:59:59.999Z'), completed('2026-10-04T13:15:00Z')], '?tz=Australia/Lord_Howe'), [['2026-09-28', 1], ['2026-10-05', 1]])
})

t.test('year boundary: the week of 2026-01-01 starts on Monday 2025-12-29', async t => {
  t.same(await weeks([completed('2026-01-01T10:00:00Z'), completed('2025-12-29T00:00:00Z')]), [['2025-12-29', 2]])
})

t.test('a range: only overlapping weeks, every one of them, zero-filled', async t => {
  const job = await jobWith([
    completed('2025-12-20T10:00:00Z', 10), // before the range
    completed('2025-12-30T10:00:00Z', 40), // in the week of `from` (2026-01-01), before `from` itself
    completed('2026-01-14T10:00:00Z', null),
    completed('2026-02-01T10:00:00Z', 90), // after the range
    { status: 'in_progress' },
  ])
  const res = await analytics(job.id, '?from=2026-01-01&to=2026-01-20')
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    completion_rate: 80, // always the whole job
    average_score_by_week: [
      { week: '2025-12-29', average_score: 40, count: 1 },
      { week: '2026-01-05', average_score: null, count: 0 },
      { week: '2026-01-12', average_score: null, count: 1 },
      { week: '2026-01-19', average_score: null, count: 0 },
    ],
    interviews_by_status: { completed: 4, in_progress: 1, expired: 0 },
    total_interviews: 5,
  })
})

t.test('bad parameters are 400s naming the parameter', async t => {
  const job = await jobWith([])
  const cases: Record<string, string> = {
    '?tz=Mars/Olympus': 'querystring/tz',
    '?tz=UTC%2B3': 'querystring/tz',
    '?tz=': 'querystring/tz',
    '?from=2026-02-01&to=2026-01-01': 'querystring/from',
    '?from=2020-01-01&to=2025-01-02': 'querystring/to',
    '?from=2026-01-01': 'querystring/to',
    '?to=2026-01-01': 'querystring/from',
    '?from=2026-02-30&to=2026-03-01': 'querystring/from',
    '?from=01/02/2026&to=2026-03-01': 'querystring/from',
    '?from=0001-01-01&to=0001-01-08': 'querystring/from',
    '?from=2026-01-01&to=3001-01-01': 'querystring/to',
    '?tz=US/Pacific-New': 'querystring/tz', // Node knows this old alias, PostgreSQL does not
    '?tz=Canada/East-Saskatchewan': 'querystring/tz',
  }
  for (const [query, path] of Object.entries(cases)) {
    // With If-None-Match the version is read first: the zone must be refused there too, and
    // before a missing job's 404.
    for (const [id, headers] of [[job.id, pro.auth], [job.id, { ...pro.auth, 'if-none-match': '*' }], [randomUUID(), { ...pro.auth, 'if-none-match': '*' }]] as const) {
      const res = await analytics(id, query, headers)
      t.equal(res.statusCode, 400, `${query} ${JSON.stringify(headers['if-none-match' as keyof typeof headers] ?? '')}`)
      t.equal(res.json().code, 'invalid_request')
      t.ok(res.json().details.some((d: { path: string }) => d.path === path), `${query} names ${path}`)
      t.equal(res.headers.etag, undefined, 'no ETag on an error')
    }
  }
})

t.test('403 for every caller without Pro access now, identical, before the job lookup', async t => {
  const future = new Date(Date.now() + 86_400_000)
  const tenants = {
    free: await createTenant(prisma, { plan: 'free' }),
    canceled: await createTenant(prisma, { plan: 'pro', status: 'canceled', currentPeriodEnd: future }),
    pastDue: await createTenant(prisma, { plan: 'pro', status: 'past_due', currentPeriodEnd: future }),
    expired: await createTenant(prisma, { plan: 'pro', status: 'active', currentPeriodEnd: new Date(Date.now() - 1000) }),
  }
  const bodies = new Set<string>()
  for (const [name, tenant] of Object.entries(tenants)) {
    const own = await jobWith([completed('2026-01-06T10:00:00Z')], tenant)
    for (const [what, id] of [['own job', own.id], ['missing job', randomUUID()], ['foreign job', (await jobWith([], other)).id]]) {
      const res = await analytics(id!, '', tenant.auth)
      t.equal(res.statusCode, 403, `${name}, ${what}`)
      const { request_id: rid, ...body } = res.json()
      t.equal(rid, res.headers['x-request-id'])
      bodies.add(JSON.stringify(body))
    }
  }
  t.same([...bodies].map(b => JSON.parse(b)), [{ error: 'Pro subscription required', code: 'upgrade_required', upgrade_url: '/billing/upgrade' }], 'one body for all, with the configured upgrade URL')
  t.equal((await analytics(randomUUID(), '?tz=Nowhere/Land', tenants.free.auth)).statusCode, 400, 'validation comes before the plan guard')
  t.equal((await analytics(randomUUID(), '', {})).statusCode, 401, 'authentication comes first')
})

t.test('trialing Pro passes', async t => {
  const trialing = await createTenant(prisma, { plan: 'pro', status: 'trialing', currentPeriodEnd: new Date(Date.now() + 86_400_000) })
  t.equal((await analytics((await jobWith([], trialing)).id, '', trialing.auth)).statusCode, 200)
})

t.test('another organization\'s job is exactly a missing job', async t => {
  const foreign = await jobWith([completed('2026-01-06T10:00:00Z')], other)
  const a = await analytics(foreign.id)
  const b = await analytics(randomUUID())
  t.equal(a.statusCode, 404)
  t.equal(a.body.replace(/"request_id":"[^"]+"/, ''), b.body.replace(/"request_id":"[^"]+"/, ''))
  t.same(a.json().error, 'Job not found')
})

t.test('conditional requests work here too', async t => {
  const job = await jobWith([completed('2026-01-06T10:00:00Z')])
  const first = await analytics(job.id)
  const again = await analytics(job.id, '', { ...pro.auth, 'if-none-match': first.headers.etag as string })
  t.equal(again.statusCode, 304)
  t.not((await analytics(job.id, '?tz=Asia/Tokyo')).headers.etag, undefined)
})

t.test('the analytics ETag follows the job\'s summaries and the request, not the body\'s bytes alone', async t => {
  const job = await jobWith([completed('2026-01-06T10:00:00Z', 70), { status: 'in_progress' }])
  const twin = await jobWith([completed('2026-01-06T10:00:00Z', 70), { status: 'in_progress' }])
  const etag = async (id = job.id, query = '') => {
    const res = await analytics(id, query)
    t.equal(res.statusCode, 200)
    t.equal(res.headers['cache-control'], 'private, no-cache')
    return res.headers.etag as string
  }
  const conditional = async (tag: string, id = job.id, query = '') => await analytics(id, query, { ...pro.auth, 'if-none-match': tag })
  const first = await etag()
  t.match(first, /^"[A-Za-z0-9_-]{27}"$/)
  t.equal(await etag(), first, 'stable while nothing changes')
  t.not(await etag(twin.id), first, 'another job with the same figures has its own')
  const tags = new Set([first, await etag(job.id, '?tz=Asia/Kathmandu'), await etag(job.id, '?from=2026-01-01&to=2026-02-01'), await etag(job.id, '?tz=Asia/Kathmandu&from=2026-01-01&to=2026-02-01')])
  t.equal(tags.size, 4, 'each zone and range has its own')

  const matched = await conditional(first)
  t.equal(matched.statusCode, 304)
  t.equal(matched.body, '')
  t.equal(matched.headers.etag, first)
  t.equal(matched.headers['cache-control'], 'private, no-cache')
  t.equal((await conditional(first, job.id, '?tz=Asia/Kathmandu')).statusCode, 200, 'not for another zone')
  t.equal((await conditional(first, twin.id)).statusCode, 200, 'not for another job')

  // Each kind of write to the job's screens moves the ETag on; a 304 is never stale.
  const seen = new Set([first])
  const changed = async (what: string) => {
    const previous = [...seen].at(-1)!
    const res = await conditional(previous)
    t.equal(res.statusCode, 200, `${what}: the previous ETag no longer matches`)
    t.not(res.headers.etag, previous)
    seen.add(res.headers.etag as string)
    t.equal((await conditional(res.headers.etag as string)).statusCode, 304, `${what}: the new one does`)
  }
  await createScreens(prisma, job.id, [{ status: 'expired' }])
  await changed('a new screen that adds no bin')
  await prisma.screen.updateMany({ where: { jobId: job.id, status: 'completed' }, data: { score: 71 } })
  await changed('a changed score')
  // Within its UTC week, so the default body stays the same, but into the previous local week
  // west of UTC (Sunday evening in Los Angeles): the ETag must move.
  await prisma.screen.updateMany({ where: { jobId: job.id, status: 'completed' }, data: { completedAt: at('2026-01-05T03:00:00Z') } })
  await changed('a completion moved within its week')
  // Within its quarter hour, which lies in one local week in every zone: no answer can change,
  // and the ETag stays (writers append nothing for a change that nets to nothing).
  await prisma.screen.updateMany({ where: { jobId: job.id, status: 'completed' }, data: { completedAt: at('2026-01-05T03:10:00Z') } })
  t.equal((await conditional([...seen].at(-1)!)).statusCode, 304, 'a completion moved within its quarter hour: still a 304')
  await prisma.screen.deleteMany({ where: { jobId: job.id, status: 'in_progress' } })
  await changed('a deleted screen')
  t.equal(seen.size, 5)

  const head = await app.inject({ method: 'HEAD', url: `/api/jobs/${job.id}/analytics`, headers: { ...pro.auth, 'if-none-match': [...seen].at(-1)! } })
  t.equal(head.statusCode, 304, 'HEAD too')

  const missing = await analytics(randomUUID(), '', { ...pro.auth, 'if-none-match': '*' })
  t.equal(missing.statusCode, 404, 'a missing job is a 404 whatever If-None-Match says')
  t.equal((await analytics(job.id, '', { ...other.auth, 'if-none-match': '*' })).statusCode, 404, 'and so is another organization\'s')
})
