import { PassThrough } from 'node:stream'
import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createTenant, keyWithScopes } from '../helpers/fixtures.js'

// Logs an operator can search (issue 57, part 3): one JSON line a request, with ISO 8601 time,
// the route template, status, duration, organization, key prefix, request and trace ids; the
// reason of a refusal; the query's tokens and cursors redacted. Read from the app's own stream.

type Line = Record<string, unknown>
const lines: Line[] = []
const stream = new PassThrough()
stream.on('data', (chunk: Buffer) => { for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Line) })

const { app, prisma } = await buildTestApp(t, { logStream: stream, env: { RATE_LIMIT_MAX: '40', AUTH_FAILURE_LIMIT: '8', METRICS_TOKEN: 'metrics-token-for-tests-0123456789' } })
const tenant = await createTenant(prisma)
const job = await createJob(prisma, tenant, { questions: 1 })
const prefixOf = (key: string): string => /^(srk_[^_]+)_/.exec(key)![1]!
const linesOf = (requestId: unknown): Line[] => lines.filter(l => l.reqId === requestId)

t.test('a request leaves one line with what an operator searches by; never the key', async t => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
  const res = await app.inject({ url: `/api/jobs/${job.id}`, headers: { ...tenant.auth, traceparent: `00-${traceId}-00f067aa0ba902b7-01` } })
  t.equal(res.statusCode, 200)
  const mine = linesOf(res.headers['x-request-id'])
  t.equal(mine.length, 1, 'one line for the request')
  const expected = { level: 30, msg: 'request completed', method: 'GET', route: '/api/jobs/:jobId', url: `/api/jobs/${job.id}`, status: 200 }
  t.match(mine[0], { ...expected, duration_ms: Number, organization_id: tenant.organizationId, key_prefix: prefixOf(tenant.key), trace_id: traceId })
  t.notOk('reason' in mine[0]!, 'no reason where nothing was refused')
  t.match(mine[0]!.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'an ISO 8601 time')
  t.notOk(JSON.stringify(lines).includes(tenant.key), 'the key never reaches the log')
})

t.test('a malformed or all-zero traceparent gives no trace id', async t => {
  for (const traceparent of ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01']) {
    const res = await app.inject({ url: '/health/live', headers: { traceparent } })
    const [line] = linesOf(res.headers['x-request-id'])
    t.match(line, { route: '/health/live', status: 200 }, traceparent)
    t.notOk(line !== undefined && 'trace_id' in line, `${traceparent}: no trace id`)
  }
})

t.test('tokens and cursors in a query string are never printed', async t => {
  const page = (await app.inject({ url: '/api/jobs?limit=1', headers: tenant.auth })).json() as { next_cursor: string | null, sync_token?: string }
  let token = page.sync_token
  for (let cursor = page.next_cursor; token === undefined && cursor !== null;) {
    const next = (await app.inject({ url: `/api/jobs?cursor=${encodeURIComponent(cursor)}`, headers: tenant.auth })).json() as typeof page
    cursor = next.next_cursor
    token = next.sync_token
  }
  const secrets = [page.next_cursor, token].filter((s): s is string => typeof s === 'string')
  t.ok(secrets.length >= 1, 'a cursor or a sync token to ask with')
  const asked = [
    `/api/jobs?limit=1&cursor=${encodeURIComponent(secrets[0]!)}`,
    `/api/jobs?changed_since=${encodeURIComponent(secrets.at(-1)!)}&limit=5`,
    '/api/jobs?limit=1&access_token=not-a-real-token-value-42',
  ]
  for (const url of asked) {
    const res = await app.inject({ url, headers: tenant.auth })
    const [line] = linesOf(res.headers['x-request-id'])
    t.match(line?.url, /=\[redacted\]/, `${url.split('?')[1]!.split('=')[0]}: redacted`)
    t.match(line?.url, /limit=(1|5)/, 'the other parameters kept')
  }
  const log = JSON.stringify(lines)
  for (const secret of [...secrets, 'not-a-real-token-value-42']) t.notOk(log.includes(secret) || log.includes(encodeURIComponent(secret)), `${secret.slice(0, 12)}...: never in the log`)
})

t.test('every 401, 403 and 429 names its reason', async t => {
  const free = await createTenant(prisma, { plan: 'free' })
  const readOnly = await keyWithScopes(prisma, tenant, ['jobs:read'])
  const limited = await createTenant(prisma)
  const unknownKey = `${prefixOf(tenant.key)}_${'A'.repeat(43)}`
  const cases: Array<[string, string, Record<string, string>, number, string]> = [
    ['no key', `/api/jobs/${job.id}`, {}, 401, 'no_bearer_key'],
    ['not a key of ours', `/api/jobs/${job.id}`, { authorization: 'Bearer hello' }, 401, 'malformed_key'],
    ['an unknown key', `/api/jobs/${job.id}`, { authorization: `Bearer ${unknownKey}` }, 401, 'unknown_key'],
    ['the free plan', `/api/jobs/${job.id}/analytics`, free.auth, 403, 'upgrade_required'],
    ['a key without the scope', `/api/jobs/${job.id}/analytics`, readOnly.auth, 403, 'insufficient_scope'],
    ['another organization\'s job', `/api/jobs/${job.id}`, free.auth, 404, 'not_found'],
  ]
  for (const [name, url, headers, status, reason] of cases) {
    const res = await app.inject({ url, headers })
    t.equal(res.statusCode, status, name)
    t.match(linesOf(res.headers['x-request-id']), [{ status, reason }], `${name}: ${reason}`)
  }
  t.match(linesOf((await app.inject({ url: `/api/jobs/${job.id}`, headers: { authorization: `Bearer ${unknownKey}` } })).headers['x-request-id']), [{ key_prefix: prefixOf(tenant.key) }], 'an unknown key\'s prefix, which names no key, is logged')
  let last = await app.inject({ url: '/api/me', headers: limited.auth })
  for (let i = 0; i < 45 && last.statusCode !== 429; i++) last = await app.inject({ url: '/api/me', headers: limited.auth })
  t.equal(last.statusCode, 429, 'past RATE_LIMIT_MAX')
  t.match(linesOf(last.headers['x-request-id']), [{ status: 429, reason: 'rate_limit_per_key', organization_id: limited.organizationId }], 'a 429: the key\'s limit')
  const metrics = await app.inject({ url: '/metrics' })
  t.match(linesOf(metrics.headers['x-request-id']), [{ status: 401, reason: 'unauthorized', route: '/metrics' }], '/metrics without its token')
  let failed = await app.inject({ url: '/api/me', headers: { authorization: `Bearer ${unknownKey}` } })
  for (let i = 0; i < 10 && failed.statusCode !== 429; i++) failed = await app.inject({ url: '/api/me', headers: { authorization: `Bearer ${unknownKey}` } })
  t.equal(failed.statusCode, 429, 'past AUTH_FAILURE_LIMIT')
  t.match(linesOf(failed.headers['x-request-id']), [{ status: 429, reason: 'rate_limit_failed_auth' }], 'a 429: the failed authentications\' limit')
})
