import t from 'tap'
import { buildTestApp } from './helpers/app.js'
import { ContractError, contractProblems } from './helpers/contract.js'
import { createJob, createTenant } from './helpers/fixtures.js'

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
  t.match(contractProblems({ method: 'GET', url: `/api/jobs/${job.id}`, statusCode: 304, headers: get.headers, body: get.body }), [/a body where none is documented/])
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
