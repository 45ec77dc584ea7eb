import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createScreens, createTenant, keyWithScopes } from '../helpers/fixtures.js'
import { sleep } from '../helpers/sleep.js'

// SQL statements per request, counted from Prisma's query events (what is sent, not what
// the code looks like it sends). None of a request's statements run concurrently, so each is
// a sequential round trip. docs/performance.md keeps the before and after.

// The fold of the summary deltas and the webhooks' dispatcher run on timers, not per request:
// off here, so that only a request's own statements are counted.
const { app, prisma } = await buildTestApp(t, { env: { SUMMARY_FOLD_INTERVAL_MS: '0', WEBHOOK_WORKER: 'off' }, db: { logQueries: true } })
const sent: string[] = []
;(app.database.prisma as unknown as { $on: (e: 'query', cb: (e: { query: string }) => void) => void }).$on('query', e => { sent.push(e.query) })

const pro = await createTenant(prisma, { plan: 'pro' })
const job = await createJob(prisma, pro, { questions: 3 })
await createScreens(prisma, job.id, [{ status: 'completed', score: 70, completedAt: new Date('2026-01-06T10:00:00Z') }, { status: 'expired' }])

async function statements (url: string, headers: Record<string, string> = pro.auth): Promise<{ status: number, sql: string[] }> {
  sent.length = 0
  const res = await app.inject({ url, headers })
  await sleep(20) // the unawaited last_used_at write
  return { status: res.statusCode, sql: [...sent] }
}

const operations: Array<[string, string]> = [
  ['get job', `/api/jobs/${job.id}`],
  ['analytics', `/api/jobs/${job.id}/analytics?tz=Europe/Berlin`],
  ['jobs analytics (a batch)', `/api/analytics/jobs?job_id=${job.id}&job_id=00000000-0000-4000-8000-000000000000&tz=Europe/Berlin`],
  ['organization analytics', '/api/analytics/organization?tz=Europe/Berlin&job_status=active&from=2026-01-01&to=2026-03-31'],
  ['analytics beside its previous period', `/api/jobs/${job.id}/analytics?from=2026-01-01&to=2026-03-31&compare=previous_period`],
  ['jobs analytics beside their previous period', `/api/analytics/jobs?job_id=${job.id}&from=2026-01-01&to=2026-03-31&compare=previous_period`],
  ['organization analytics beside its previous period', '/api/analytics/organization?from=2026-01-01&to=2026-03-31&compare=previous_period'],
  ['list jobs', '/api/jobs?limit=20'],
  ['me', '/api/me'],
]

t.test('a known caller costs no query: each operation is one statement', async t => {
  t.ok(app.callerCache.enabled, 'the caller cache hears changes')
  const first = await statements('/api/me')
  t.equal(first.status, 200)
  t.equal(first.sql.filter(q => /api_keys/.test(q) && /SELECT/i.test(q)).length, 1, 'the first request looks the caller up: one statement for key, user and organization')
  t.ok(first.sql.some(q => /UPDATE/i.test(q) && /last_used_at/.test(q)), 'and records the key\'s use')
  const figures: string[] = []
  for (const [name, url] of operations) {
    const { status, sql } = await statements(url)
    t.equal(status, 200, name)
    t.equal(sql.length, name === 'me' ? 0 : 1, `${name}: ${name === 'me' ? 'no statement' : 'one statement'}`)
    figures.push(`${name} ${sql.length}`)
  }
  t.comment(`sql per request figures: warm caller: ${figures.join(', ')}`)
})

t.test('analytics with If-None-Match: a current ETag costs one small read, a stale one the read and the answer', async t => {
  const url = `/api/jobs/${job.id}/analytics?tz=Europe/Berlin`
  const { etag } = (await app.inject({ url, headers: pro.auth })).headers as { etag: string }
  const current = await statements(url, { ...pro.auth, 'if-none-match': etag })
  t.equal(current.status, 304)
  t.equal(current.sql.length, 1, 'one statement')
  t.match(current.sql[0], /job_screen_stats/)
  t.notMatch(current.sql[0], /job_weekly_bins|completed_at/, 'the version only: no bins are read')
  // A question not asked before (another zone): its answer is not kept yet.
  const stale = await statements(`/api/jobs/${job.id}/analytics?tz=America/New_York`, { ...pro.auth, 'if-none-match': '"stale"' })
  t.equal(stale.status, 200)
  t.equal(stale.sql.length, 2, 'the version, then the answer')
  const kept = await statements(url, { ...pro.auth, 'if-none-match': '"stale"' })
  t.equal(kept.status, 200)
  t.equal(kept.sql.length, 1, 'a question asked before: its kept answer, after the version alone')
  t.notMatch(kept.sql[0], /job_weekly_bins|completed_at/, 'no bins are read')
  t.comment(`sql per request figures: analytics with a current ETag ${current.sql.length}, with a stale one ${stale.sql.length} (${kept.sql.length} once asked)`)
})

t.test('a batch of analytics with If-None-Match: a current ETag costs one read of the versions, a stale one the read and the answer', async t => {
  const url = `/api/analytics/jobs?job_id=${job.id}&job_id=00000000-0000-4000-8000-000000000000&tz=Europe/Berlin`
  const { etag } = (await app.inject({ url, headers: pro.auth })).headers as { etag: string }
  const current = await statements(url, { ...pro.auth, 'if-none-match': etag })
  t.equal(current.status, 304)
  t.equal(current.sql.length, 1, 'one statement')
  t.notMatch(current.sql[0], /job_weekly_bins|completed_at/, 'the versions only: no bins are read')
  // As the single job's: a question not asked before (another zone) has no answer kept yet.
  const stale = await statements(url.replace('Europe/Berlin', 'America/New_York'), { ...pro.auth, 'if-none-match': '"stale"' })
  t.equal(stale.status, 200)
  t.equal(stale.sql.length, 2, 'the versions, then the answer')
  const kept = await statements(url, { ...pro.auth, 'if-none-match': '"stale"' })
  t.equal(kept.status, 200)
  t.equal(kept.sql.length, 1, 'a question asked before: its kept answer, after the versions alone')
  t.notMatch(kept.sql[0], /job_weekly_bins|completed_at/, 'no bins are read')
  t.comment(`sql per request figures: jobs analytics batch with a current ETag ${current.sql.length}, with a stale one ${stale.sql.length} (${kept.sql.length} once asked)`)
})

t.test('the organization\'s rollup with If-None-Match: a current ETag costs one read of the version, a stale one the read and the answer', async t => {
  const url = '/api/analytics/organization?tz=Europe/Berlin'
  const { etag } = (await app.inject({ url, headers: pro.auth })).headers as { etag: string }
  const current = await statements(url, { ...pro.auth, 'if-none-match': etag })
  t.equal(current.status, 304)
  t.equal(current.sql.length, 1, 'one statement')
  t.notMatch(current.sql[0], /screens s|completed_at/, 'the version only: no screen is read')
  // As the single job's: a question not asked before (another zone) has no answer kept yet.
  const stale = await statements('/api/analytics/organization?tz=America/New_York', { ...pro.auth, 'if-none-match': '"stale"' })
  t.equal(stale.status, 200)
  t.equal(stale.sql.length, 2, 'the version, then the answer')
  const kept = await statements(url, { ...pro.auth, 'if-none-match': '"stale"' })
  t.equal(kept.status, 200)
  t.equal(kept.sql.length, 1, 'a question asked before: its kept answer, after the version alone')
  t.notMatch(kept.sql[0], /screens s|completed_at/, 'no screen is read')
  t.comment(`sql per request figures: organization rollup with a current ETag ${current.sql.length}, with a stale one ${stale.sql.length} (${kept.sql.length} once asked)`)
})

t.test('a key without the operation\'s scope: 403 with no statement, whatever the job (issue 24)', async t => {
  const other = await createTenant(prisma, { plan: 'pro' })
  const foreign = await createJob(prisma, other)
  const free = await createTenant(prisma, { plan: 'free' })
  const cases = [
    { key: await keyWithScopes(prisma, pro, ['analytics:read']), path: (id: string) => `/api/jobs/${id}`, scope: 'jobs:read' },
    { key: await keyWithScopes(prisma, pro, ['jobs:read']), path: (id: string) => `/api/jobs/${id}/analytics?tz=Europe/Berlin`, scope: 'analytics:read' },
    { key: await keyWithScopes(prisma, free, ['jobs:read']), path: (id: string) => `/api/jobs/${id}/analytics`, scope: 'analytics:read' },
  ]
  const figures: string[] = []
  for (const { key, path, scope } of cases) {
    t.equal((await statements('/api/me', key.auth)).status, 200, 'the caller is looked up once (and cached)')
    for (const [target, id] of [['own', job.id], ['foreign', foreign.id], ['missing', '00000000-0000-4000-8000-000000000000']] as const) {
      sent.length = 0
      const res = await app.inject({ url: path(id), headers: key.auth })
      await sleep(20)
      t.equal(res.statusCode, 403, `${path(target)}: 403`)
      t.match(res.json(), { code: 'insufficient_scope', required_scope: scope })
      t.same(sent, [], `${path(target)}: no statement`)
      figures.push(`${scope} ${target} ${sent.length}`)
    }
  }
  t.comment(`sql per request figures: insufficient scope, warm caller: ${figures.join(', ')}`)
})

t.test('an unknown caller costs one statement, a malformed one none', async t => {
  const unknown = await statements(`/api/jobs/${job.id}`, { authorization: `Bearer ${pro.key.slice(0, -4)}AAAA` })
  t.equal(unknown.status, 401)
  t.equal(unknown.sql.length, 1)
  const malformed = await statements(`/api/jobs/${job.id}`, { authorization: 'Bearer nope' })
  t.equal(malformed.status, 401)
  t.equal(malformed.sql.length, 0)
})

t.test('with the cache off (AUTH_CACHE_TTL_MS=0), a request is two statements', async t => {
  const cold = await buildTestApp(t, { env: { AUTH_CACHE_TTL_MS: '0', SUMMARY_FOLD_INTERVAL_MS: '0', WEBHOOK_WORKER: 'off' }, db: { logQueries: true } })
  const seen: string[] = []
  ;(cold.app.database.prisma as unknown as { $on: (e: 'query', cb: (e: { query: string }) => void) => void }).$on('query', e => { seen.push(e.query) })
  const tenant = await createTenant(cold.prisma, { plan: 'pro' })
  const coldJob = await createJob(cold.prisma, tenant)
  t.notOk(cold.app.callerCache.enabled)
  seen.length = 0
  for (let i = 0; i < 2; i++) {
    t.equal((await cold.app.inject({ url: `/api/jobs/${coldJob.id}`, headers: tenant.auth })).statusCode, 200)
    await sleep(20)
    const kinds = seen.filter(q => !/^UPDATE/i.test(q)).map(q => /"api_keys"/.test(q) ? 'caller' : /FROM jobs/.test(q) ? 'job' : q)
    t.same(kinds, ['caller', 'job'], `request ${i + 1}: the caller, then the job`)
    seen.length = 0
  }
})
