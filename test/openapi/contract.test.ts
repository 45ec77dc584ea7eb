import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { ContractError, contractProblems } from '../helpers/contract.js'
import { createJob, createTenant, keyWithScopes } from '../helpers/fixtures.js'

// The response check in the test helper is active for the whole suite, and it fails what it
// should. Real responses are taken, then altered the way a regression would alter them.

const { app, prisma } = await buildTestApp(t)
const tenant = await createTenant(prisma)
const job = await createJob(prisma, tenant)

t.test('the test app checks every response it returns', async t => {
  t.equal((app as unknown as { validatesResponses?: boolean }).validatesResponses, true)
  const res = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
  t.equal(res.statusCode, 200, 'a conforming response passes')
})

t.test('an undocumented field, a missing field, a wrong type fail', async t => {
  const res = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
  const observed = { method: 'GET', url: `/api/jobs/${job.id}`, statusCode: 200, headers: res.headers, body: res.body }
  t.same(contractProblems(observed), [])
  const body = res.json() as Record<string, unknown>
  t.match(contractProblems({ ...observed, body: JSON.stringify({ ...body, secret_internal: 1 }) }), [/must NOT have additional properties/], 'undocumented field')
  const { title: _, ...missing } = body
  t.match(contractProblems({ ...observed, body: JSON.stringify(missing) }), [/must have required property 'title'/], 'missing field')
  t.match(contractProblems({ ...observed, body: JSON.stringify({ ...body, question_count: '3' }) }), [/must be integer/], 'wrong type')
  t.match(contractProblems({ ...observed, body: JSON.stringify({ ...body, brand_color: 'blue' }) }), [/must match pattern/], 'pattern')
})

t.test('an undocumented status, a missing request id, a 304 with a body, a bad header fail', async t => {
  const res = await app.inject({ url: '/api/me', headers: tenant.auth })
  const observed = { method: 'GET', url: '/api/me', statusCode: 200, headers: res.headers, body: res.body }
  t.match(contractProblems({ ...observed, statusCode: 404 }), [/status 404 is not documented for getMe/])
  const { 'x-request-id': _, ...noId } = res.headers
  t.match(contractProblems({ ...observed, headers: noId }), [/x-request-id is missing/])
  t.match(contractProblems({ ...observed, headers: { ...res.headers, 'x-ratelimit-remaining': 'lots' } }), [/X-RateLimit-Remaining=lots/])
  const get = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
  const { 'content-type': _t, 'content-length': _l, ...bodilessHeaders } = get.headers
  t.match(contractProblems({ method: 'GET', url: `/api/jobs/${job.id}`, statusCode: 304, headers: bodilessHeaders, body: get.body }), [/a body where none is documented/])
})

t.test('error bodies and their headers are checked too', async t => {
  const bad = await app.inject({ url: '/api/jobs/not-a-uuid', headers: tenant.auth })
  t.equal(bad.statusCode, 400)
  const observed = { method: 'GET', url: '/api/jobs/not-a-uuid', statusCode: 400, headers: bad.headers, body: bad.body }
  t.match(contractProblems({ ...observed, body: JSON.stringify({ ...bad.json(), details: 'x' }) }), [/must be array/])
  const unauthorized = await app.inject({ url: '/api/me' })
  const { 'www-authenticate': _, ...noChallenge } = unauthorized.headers
  t.match(contractProblems({ method: 'GET', url: '/api/me', statusCode: 401, headers: noChallenge, body: unauthorized.body }), [/www-authenticate is missing/])
  const ok = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
  const { etag: _e, ...noEtag } = ok.headers
  t.match(contractProblems({ method: 'GET', url: `/api/jobs/${job.id}`, statusCode: 200, headers: noEtag, body: ok.body }), [/etag is missing/])
  t.ok(new ContractError('x') instanceof Error, 'assertContract throws a ContractError')
})

t.test('a 304: declared for every operation that sends one, with its ETag, and no Content-Type or Content-Length', async t => {
  // The list filtered by status: a walk of every job ends with a sync token, whose snapshot
  // moves with every transaction on the server (other test files' too), and its body's ETag with it.
  for (const url of [`/api/jobs/${job.id}`, '/api/jobs?status=active', '/api/me']) {
    const ok = await app.inject({ url, headers: tenant.auth })
    const res = await app.inject({ url, headers: { ...tenant.auth, 'if-none-match': ok.headers.etag as string } })
    t.equal(res.statusCode, 304, `${url}: 304 (and the test app found it documented)`)
    t.equal(res.headers['content-type'], undefined, 'no content-type')
    t.equal(res.headers['content-length'], undefined, 'no content-length')
    t.equal(res.headers.etag, ok.headers.etag, 'the ETag')
    const observed = { method: 'GET', url, statusCode: 304, headers: res.headers, body: '' }
    t.same(contractProblems(observed), [])
    t.match(contractProblems({ ...observed, headers: { ...res.headers, 'content-type': 'application/json; charset=utf-8' } }), [/content-type application\/json; charset=utf-8 where no content is documented/])
    t.match(contractProblems({ ...observed, headers: { ...res.headers, 'content-length': '0' } }), [/content-length 0 where no content is documented/])
    const { etag: _, ...noEtag } = res.headers
    t.match(contractProblems({ ...observed, headers: noEtag }), [/etag is missing/])
  }
})

t.test('a header the document does not declare for the response fails; so does an undocumented content type', async t => {
  const res = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
  const observed = { method: 'GET', url: `/api/jobs/${job.id}`, statusCode: 200, headers: res.headers, body: res.body }
  t.match(contractProblems({ ...observed, headers: { ...res.headers, 'x-powered-by': 'Fastify' } }), [/header x-powered-by is not documented for this response/])
  t.match(contractProblems({ ...observed, headers: { ...res.headers, 'content-type': 'text/plain' } }), [/content-type text\/plain is not one of application\/json/])
  const missing = await app.inject({ url: '/api/jobs/00000000-0000-4000-8000-000000000000', headers: tenant.auth })
  t.equal(missing.statusCode, 404)
  t.match(contractProblems({ method: 'GET', url: '/api/jobs/00000000-0000-4000-8000-000000000000', statusCode: 404, headers: { ...missing.headers, etag: '"x"' }, body: missing.body }), [/header etag is not documented/], 'an ETag on an error')
  t.match(contractProblems({ method: 'GET', url: '/api/jobs/00000000-0000-4000-8000-000000000000', statusCode: 404, headers: { ...missing.headers, 'retry-after': '5' }, body: missing.body }), [/header retry-after is not documented/])
})

t.test('a 403 is checked against the operation\'s declared 403: insufficient_scope, upgrade_required, or either (issue 24)', async t => {
  const analyticsOnly = await keyWithScopes(prisma, tenant, ['analytics:read'])
  const jobsOnly = await keyWithScopes(prisma, tenant, ['jobs:read'])
  const free = await createTenant(prisma, { plan: 'free' })
  const freeJob = await createJob(prisma, free)
  const scope = await app.inject({ url: `/api/jobs/${job.id}`, headers: analyticsOnly.auth })
  t.equal(scope.statusCode, 403, 'getJob without jobs:read (and the test app found it documented)')
  const observed = { method: 'GET', url: `/api/jobs/${job.id}`, statusCode: 403, headers: scope.headers, body: scope.body }
  t.same(contractProblems(observed), [])
  const { required_scope: _, ...noScope } = scope.json() as Record<string, unknown>
  t.match(contractProblems({ ...observed, body: JSON.stringify(noScope) }), [/must have required property 'required_scope'/], 'required_scope missing')
  t.match(contractProblems({ ...observed, body: JSON.stringify({ ...scope.json(), code: 'forbidden' }) }), [/data\/code must be equal to/], 'another code')
  const plan = await app.inject({ url: `/api/jobs/${freeJob.id}/analytics`, headers: free.auth })
  t.equal(plan.statusCode, 403)
  t.match(contractProblems({ ...observed, body: plan.body }), [/must have required property 'required_scope'/], 'upgrade_required is not a 403 of getJob')
  const analyticsScope = await app.inject({ url: `/api/jobs/${job.id}/analytics`, headers: jobsOnly.auth })
  t.equal(analyticsScope.statusCode, 403, 'getJobAnalytics without analytics:read')
  const analytics = { method: 'GET', url: `/api/jobs/${job.id}/analytics`, statusCode: 403, headers: analyticsScope.headers, body: analyticsScope.body }
  t.same(contractProblems(analytics), [], 'insufficient_scope is a 403 of getJobAnalytics')
  t.same(contractProblems({ ...analytics, body: plan.body }), [], 'so is upgrade_required')
  t.match(contractProblems({ ...analytics, body: JSON.stringify({ ...analyticsScope.json(), upgrade_url: '/x' }) }), [/must NOT have additional properties/], 'but not a mix of the two')
  const list = await app.inject({ url: '/api/jobs', headers: analyticsOnly.auth })
  t.equal(list.statusCode, 403, 'listJobs without jobs:read')
  t.match(list.json(), { code: 'insufficient_scope', required_scope: 'jobs:read' })
})
