import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { HEADERS_TIMEOUT_MS, MAX_HEADER_BYTES, MAX_PARAM_LENGTH, MAX_QUERY_LENGTH, MAX_URL_LENGTH, TIMEOUT_CHECK_INTERVAL_MS } from '../../src/limits.js'
import { buildTestApp } from '../helpers/app.js'
import { assertContract, contractProblems } from '../helpers/contract.js'
import { createJob, createTenant } from '../helpers/fixtures.js'

// The bounds on a request (URL, query string, path segment, headers), over real sockets
// where Node's HTTP parser is the one refusing: every refusal in the documented shape.

const { app, prisma } = await buildTestApp(t)
const tenant = await createTenant(prisma)
const job = await createJob(prisma, tenant)
await app.listen({ host: '127.0.0.1', port: 0 })
const port = (app.server.address() as AddressInfo).port

interface Raw { statusCode: number, headers: Record<string, string | string[] | undefined>, body: string }

/** One request on a connection of its own, as any HTTP client sends it. */
async function send (path: string, headers: Record<string, string> = {}): Promise<Raw> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, res => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { body += c })
      res.on('end', () => { resolve({ statusCode: res.statusCode!, headers: res.headers, body }) })
    })
    req.on('error', reject)
    req.end()
  })
}

function checkShape (t: Test, res: Raw, path: string, status: number, code: string): void {
  t.equal(res.statusCode, status, `${path.slice(0, 40)}… is a ${status}`)
  const body = JSON.parse(res.body) as Record<string, unknown>
  t.equal(body.code, code)
  t.equal(body.request_id, res.headers['x-request-id'], 'the request id is in the body and the header')
  assertContract({ method: 'GET', url: path, statusCode: res.statusCode, headers: res.headers, body: res.body })
}

t.test('headers over the limit: 431 in the error shape, not Node\'s bare one', async t => {
  const res = await send(`/api/jobs/${job.id}`, { ...tenant.auth, 'x-padding': 'a'.repeat(MAX_HEADER_BYTES) })
  checkShape(t, res, `/api/jobs/${job.id}`, 431, 'headers_too_large')
  t.match(JSON.parse(res.body).error, new RegExp(`${MAX_HEADER_BYTES} bytes`))
  t.equal((await send(`/api/jobs/${job.id}`, { ...tenant.auth, 'x-padding': 'a'.repeat(MAX_HEADER_BYTES - 1000) })).statusCode, 200, 'just under the limit passes')
})

t.test('a URL too long for the parser is a 431 too; under it, the URL bounds answer 414', async t => {
  const huge = `/api/jobs?x=${'a'.repeat(MAX_HEADER_BYTES)}`
  checkShape(t, await send(huge, tenant.auth), '/api/jobs', 431, 'headers_too_large')
  const longQuery = await send(`/api/jobs?status=active&x=${'a'.repeat(MAX_QUERY_LENGTH)}`, tenant.auth)
  checkShape(t, longQuery, '/api/jobs', 414, 'uri_too_long')
  t.match(JSON.parse(longQuery.body).error, new RegExp(`query string is longer than ${MAX_QUERY_LENGTH}`))
})

t.test('the URL bounds, exactly at and past each', async t => {
  const at = `/api/jobs?cursor=${'a'.repeat(MAX_QUERY_LENGTH - 'cursor='.length)}`
  t.equal((await app.inject({ url: at, headers: tenant.auth })).statusCode, 400, `a query string of ${MAX_QUERY_LENGTH} is read (and its cursor refused)`)
  t.equal((await app.inject({ url: `${at}a`, headers: tenant.auth })).statusCode, 414, 'one more character is a 414')

  // Segments under the router's limit, a query under its own: only the whole URL is too long.
  const segment = 'a'.repeat(MAX_PARAM_LENGTH - 10)
  const path = `/api/jobs/${[segment, segment, segment].join('/')}`
  const query = `?tz=${'b'.repeat(MAX_URL_LENGTH - path.length - 4)}`
  t.equal((path + query).length, MAX_URL_LENGTH)
  t.equal((await app.inject({ url: path + query, headers: tenant.auth })).statusCode, 404, `${MAX_URL_LENGTH} characters: read (no such route)`)
  const over = await app.inject({ url: `${path + query}b`, headers: tenant.auth })
  t.equal(over.statusCode, 414)
  t.match(over.json().error, new RegExp(`the URL is longer than ${MAX_URL_LENGTH}`))

  const segmentOver = await app.inject({ url: `/api/jobs/${'a'.repeat(MAX_PARAM_LENGTH + 1)}`, headers: tenant.auth })
  t.equal(segmentOver.statusCode, 414)
  t.match(segmentOver.json().error, /path segment is longer than 500/)
})

t.test('a number past any bound ("1e309", "Infinity") in any integer parameter of any operation: a 400 naming it', async t => {
  // From the document, so that a new operation is covered without a line here: Ajv's
  // coercion skips its own bounds for these (the fuzz test found one route without a check).
  const doc = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')) as { paths: Record<string, Record<string, { parameters?: Array<{ name: string, in: string, schema: { type?: string } }> }>> }
  let checked = 0
  for (const [template, item] of Object.entries(doc.paths)) {
    const operation = item.get
    if (operation === undefined) continue
    const path = template.replace(/\{[^}]+\}/g, job.id)
    for (const parameter of operation.parameters ?? []) {
      if (parameter.in !== 'query' || parameter.schema.type !== 'integer') continue
      for (const value of ['1e309', '-1e309', 'Infinity']) {
        const res = await app.inject({ url: `${path}?${parameter.name}=${value}`, headers: tenant.auth })
        t.equal(res.statusCode, 400, `${template}?${parameter.name}=${value}`)
        t.same(res.json().details, [{ path: `querystring/${parameter.name}`, message: 'must be a finite number' }])
        checked++
      }
    }
  }
  t.ok(checked >= 9, `${checked} requests: every integer query parameter (jobs, webhook endpoints, deliveries)`)
})

/** Writes `text` on a connection of its own; what comes back until the server closes it, and when. */
async function rawExchange (text: string): Promise<{ raw: string, ms: number, body: Record<string, unknown> }> {
  const started = Date.now()
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => { socket.write(text) })
    let out = ''
    socket.on('data', c => { out += c.toString() })
    socket.on('close', () => { resolve(out) })
    socket.on('error', reject)
  })
  return { raw, ms: Date.now() - started, body: JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as Record<string, unknown> }
}

t.test('what the parser refuses otherwise is a 400 in the shape', async t => {
  const { raw, body } = await rawExchange('NOT AN HTTP REQUEST\r\n\r\n')
  t.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/)
  t.match(raw, /\r\nx-content-type-options: nosniff\r\n/i)
  t.same(body, { error: 'Bad Request: not a valid HTTP/1.1 request', code: 'invalid_request', request_id: body.request_id, details: [] })
})

t.test(`headers that do not arrive within ${HEADERS_TIMEOUT_MS / 1000} s: 408 in the shape`, async t => {
  const { raw, ms, body } = await rawExchange(`GET /api/jobs/${job.id} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${tenant.auth.authorization}\r\n`)
  t.match(raw, /^HTTP\/1\.1 408 Request Timeout\r\n/)
  t.equal(body.code, 'request_timeout')
  t.ok(ms >= HEADERS_TIMEOUT_MS && ms <= HEADERS_TIMEOUT_MS + TIMEOUT_CHECK_INTERVAL_MS + 1000, `after ${ms} ms`)
})

t.test('random header and URL sizes over real sockets: documented answers only', async t => {
  const statuses: Record<number, number> = {}
  await fc.assert(fc.asyncProperty(
    fc.oneof(fc.integer({ min: 0, max: MAX_HEADER_BYTES }), fc.integer({ min: 0, max: 3 * MAX_HEADER_BYTES })),
    fc.oneof(fc.integer({ min: 0, max: 2 * MAX_QUERY_LENGTH }), fc.integer({ min: 0, max: 3 * MAX_HEADER_BYTES })),
    fc.boolean(),
    async (headerBytes, queryLength, authorized) => {
      const path = `/api/jobs/${job.id}/analytics?tz=UTC&pad=${'q'.repeat(queryLength)}`
      const res = await send(path, { ...(authorized ? tenant.auth : {}), 'x-padding': 'h'.repeat(headerBytes) })
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
      t.same(contractProblems({ method: 'GET', url: path, statusCode: res.statusCode, headers: res.headers, body: res.body }), [], `${res.statusCode} for ${headerBytes} header bytes, a query of ${queryLength}`)
      t.ok(res.statusCode < 500)
    }
  ), { numRuns: 150, seed: 20261122 })
  t.comment(`request-limit fuzz: 150 requests over sockets, statuses ${JSON.stringify(statuses)}`)
  t.ok((statuses[431] ?? 0) > 0 && (statuses[414] ?? 0) > 0 && (statuses[200] ?? 0) > 0, 'each outcome reached')
})
