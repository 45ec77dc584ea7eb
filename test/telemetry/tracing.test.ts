import { randomBytes } from 'node:crypto'
import t from 'tap'
import { startTracing, stopTracing } from '../../src/telemetry/tracing.js'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js'
import { until } from '../helpers/until.js'
import { startReceiver } from '../helpers/webhook-receiver.js'
import { deliveriesOf, makeEndpoint } from '../helpers/webhooks.js'

// Traces as a collector gets them (issue 57, parts 1 and 2), on both databases: tracing
// started by the standard variables, exported over OTLP http/json to a receiver on
// 127.0.0.1 (test/helpers/otlp-receiver.ts). A request continues the caller's trace down
// to its SQL; a job changed by plain SQL reaches the partner with a traceparent naming the
// attempt's span, in the dispatcher run's trace, as the delivery record says.

const otlp = await startOtlpReceiver()
Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SERVICE_NAME: 'screening-under-test' })
t.ok(await startTracing() !== undefined, 'tracing started by OTEL_EXPORTER_OTLP_ENDPOINT')
const { app, prisma } = await buildTestApp(t, { env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', WEBHOOK_DISPATCH_INTERVAL_MS: '100', WEBHOOK_RETRY_DELAYS: '300ms' } })
// After the app's own teardown (tap runs them last-registered first).
t.teardown(async () => { await stopTracing(); await otlp.close() })

const hex = (bytes: number): string => randomBytes(bytes).toString('hex')
const span = async (what: string, find: (s: ReceivedSpan) => boolean): Promise<ReceivedSpan> => {
  await until(what, () => otlp.spans.some(find), 15_000)
  return otlp.spans.find(find)!
}
/** `id`'s descendants among the received spans. */
const below = (id: string): ReceivedSpan[] => {
  const children = otlp.spans.filter(s => s.parentSpanId === id)
  return [...children, ...children.flatMap(c => below(c.spanId))]
}
const KINDS = ['unspecified', 'internal', 'server', 'client']
/** The trace below `root` as the receiver got it, one span a line (printed as a comment: the note quotes it). */
const drawn = (root: ReceivedSpan, depth = 0): string => [
  `${'  '.repeat(depth)}${root.name} [${KINDS[root.kind]}] ${JSON.stringify(root.attributes)}`,
  ...otlp.spans.filter(s => s.parentSpanId === root.spanId).map(child => drawn(child, depth + 1)),
].join('\n')
const parse = (traceparent: string): { traceId: string, spanId: string } => {
  const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent) ?? []
  return { traceId: traceId!, spanId: spanId! }
}

t.test('a request with a traceparent: a server span of that trace, with the route, and its SQL as children', async t => {
  const tenant = await createTenant(prisma, { plan: 'pro' })
  const job = await createJob(prisma, tenant)
  const [traceId, parentId] = [hex(16), hex(8)]
  const res = await app.inject({ url: `/api/jobs/${job.id}?token=sekret-in-the-query`, headers: { ...tenant.auth, traceparent: `00-${traceId}-${parentId}-01` } })
  t.equal(res.statusCode, 200)
  const answered = parse(String(res.headers.traceresponse))
  t.equal(answered.traceId, traceId, 'the response names the trace (traceresponse)')

  const server = await span('the server span', s => s.spanId === answered.spanId)
  t.match(server, { traceId, parentSpanId: parentId, name: 'GET /api/jobs/:jobId', kind: 2 }, 'continues the caller\'s trace, named by the route template')
  t.match(server.attributes, { 'http.route': '/api/jobs/:jobId', 'http.request.method': 'GET', 'http.response.status_code': 200, 'screening.organization_id': tenant.organizationId, 'url.query': 'token=[redacted]' })
  t.equal(server.resource['service.name'], 'screening-under-test', 'OTEL_SERVICE_NAME names the service')
  await until('the request\'s SQL spans', () => below(server.spanId).some(s => s.attributes['db.system.name'] === 'postgresql'), 15_000)
  const sql = below(server.spanId).filter(s => s.attributes['db.system.name'] === 'postgresql')
  t.ok(sql.length >= 2, `SQL spans under the request: ${sql.map(s => s.name).join(', ')}`)
  t.ok(sql.every(s => s.traceId === traceId && s.kind === 3 && /^(SELECT|WITH|UPDATE|INSERT)( [a-z_.]+)*$/.test(s.name)), 'each named by what it does and to which tables, never its text or values')
  t.ok(sql.some(s => /\bjobs\b/.test(s.name)), 'the job\'s read among them')
  t.ok(below(server.spanId).some(s => s.name === 'auth: caller lookup (cache miss)'), 'the credential check on a cache miss')
  t.comment(`trace ${traceId} as received:\n${drawn(server)}`)
  const everything = JSON.stringify(otlp.spans)
  t.notOk(everything.includes('sekret-in-the-query'), 'the query\'s token is in no span')
  t.notOk(everything.includes(tenant.key), 'nor the key')
})

t.test('a request without one: a trace of its own, its id in the response and the log line', async t => {
  const tenant = await createTenant(prisma)
  const res = await app.inject({ url: '/api/me', headers: tenant.auth })
  t.equal(res.statusCode, 200)
  const answered = parse(String(res.headers.traceresponse))
  const server = await span('the server span', s => s.spanId === answered.spanId)
  t.equal(server.parentSpanId, '', 'a root span')
  t.equal(server.traceId, answered.traceId)
  const refused = await app.inject({ url: '/api/me', headers: { authorization: 'Bearer nope' } })
  t.equal(refused.statusCode, 401)
  const refusal = await span('the 401\'s span', s => s.spanId === parse(String(refused.headers.traceresponse)).spanId)
  t.match(refusal.attributes, { 'http.response.status_code': 401, 'screening.refusal': 'malformed_key' })
})

t.test('a job changed by plain SQL: the delivery\'s traceparent names the attempt\'s span, in the dispatcher run\'s trace', async t => {
  const tenant = await createTenant(prisma)
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  const endpoint = await makeEndpoint(app, tenant, receiver.url)
  const job = await createJob(prisma, tenant)
  await until('the job\'s creation told', () => receiver.received.some(r => r.jobId === job.id), 15_000)
  await prisma.$executeRaw`UPDATE jobs SET title = 'Changed by the recruiters\u2019 app' WHERE id = ${job.id}::uuid`
  await until('the change told', () => receiver.received.filter(r => r.jobId === job.id).length >= 2, 15_000)
  const delivery = receiver.received.filter(r => r.jobId === job.id).at(-1)!
  const sent = parse(String(delivery.headers.traceparent))
  const attempt = await span('the attempt\'s span', s => s.spanId === sent.spanId)
  t.match(attempt, { traceId: sent.traceId, name: 'webhook job.updated', kind: 3 })
  t.match(attempt.attributes, { 'screening.webhook.endpoint_id': endpoint.id, 'screening.webhook.event_id': delivery.id, 'screening.webhook.attempt': 1, 'http.response.status_code': 204, 'server.address': '127.0.0.1' })
  const run = await span('the dispatcher run', s => s.spanId === attempt.parentSpanId)
  t.match(run, { name: 'webhooks: dispatch run', traceId: sent.traceId, parentSpanId: '' }, 'a child of the run that found the change')
  t.ok(Number(run.attributes['screening.webhook.events']) >= 1)
  t.comment(`trace ${sent.traceId} as received:\n${drawn(run)}`)
  const recorded = (await deliveriesOf(app, tenant, endpoint.id)).find(d => d.event_id === delivery.id) as unknown as { trace_id: string }
  t.equal(recorded.trace_id, sent.traceId, 'the delivery record keeps the trace id')
})

t.test('a retry: a trace of its own, linked to the run that found the change; a test event: in the request\'s trace', async t => {
  const tenant = await createTenant(prisma)
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  receiver.answer = ({ count }) => ({ status: count === 1 ? 503 : 204 })
  const endpoint = await makeEndpoint(app, tenant, receiver.url)
  const job = await createJob(prisma, tenant)
  await until('the retry delivered', () => receiver.received.filter(r => r.jobId === job.id).length >= 2, 15_000)
  const [first, second] = receiver.received.filter(r => r.jobId === job.id).map(r => parse(String(r.headers.traceparent)))
  const retry = await span('the retry\'s span', s => s.spanId === second!.spanId)
  t.not(second!.traceId, first!.traceId, 'the retry in a trace of its own')
  t.equal(retry.parentSpanId, '')
  const firstSpan = await span('the first attempt\'s span', s => s.spanId === first!.spanId)
  t.equal(firstSpan.status, 2, 'the failed attempt\'s span says so')
  t.same(retry.links, [{ traceId: first!.traceId, spanId: firstSpan.parentSpanId }], 'linked to the run that found the change')
  const records = await deliveriesOf(app, tenant, endpoint.id) as unknown as Array<{ attempt: number, trace_id: string, job_id: string }>
  t.same(records.filter(r => r.job_id === job.id).map(r => [r.attempt, r.trace_id]).sort(), [[1, first!.traceId], [2, second!.traceId]], 'each attempt recorded with its trace')

  const traceId = hex(16)
  const tested = await app.inject({ method: 'POST', url: `/api/webhook_endpoints/${endpoint.id}/test`, headers: { ...tenant.auth, traceparent: `00-${traceId}-${hex(8)}-01` }, payload: {} })
  t.equal(tested.statusCode, 200, tested.body)
  const test = receiver.received.find(r => r.type === 'webhook.test')!
  t.equal(parse(String(test.headers.traceparent)).traceId, traceId, 'the test event sent in the request\'s trace')
})
