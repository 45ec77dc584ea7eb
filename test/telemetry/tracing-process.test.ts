import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startOtlpReceiver } from '../helpers/otlp-receiver.js'
import { startServer } from '../helpers/server-process.js'
import { until } from '../helpers/until.js'

// The server as `npm start` runs it (issue 57, part 1): with no OpenTelemetry variable, no
// SDK and no exporter is loaded and nothing is sent (only the API, which pg-boss imports for
// its own spans: a no-op without a provider); with OTEL_EXPORTER_OTLP_ENDPOINT alone, a
// request's trace reaches the receiver over OTLP's default, http/protobuf.

const dir = mkdtempSync(join(tmpdir(), 'screening-modules-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
const command = [process.execPath, '--import', 'tsx', '--import', './test/helpers/record-modules.mjs', 'src/server.ts']
const loaded = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter(Boolean)
const otlp = await startOtlpReceiver()
t.teardown(otlp.close)

t.test('tracing off: no SDK or exporter loaded, nothing sent, no traceresponse', async t => {
  const modules = join(dir, 'off.txt')
  const server = await startServer(t, { RECORD_MODULES_FILE: modules }, { command })
  const res = await fetch(`${server.baseUrl}/api/jobs/${server.sampleJobId}`, { headers: { authorization: `Bearer ${server.keys.pro}`, traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` } })
  t.equal(res.status, 200)
  t.equal(res.headers.get('traceresponse'), null, 'no trace id answered: the service does not trace')
  const packages = loaded(modules)
  t.ok(packages.some(url => url.includes('/node_modules/fastify/')), `the recorder saw the packages the server loaded (${packages.length} modules)`)
  t.ok(packages.some(url => url.includes('/@opentelemetry/api/')), 'the API, which pg-boss imports')
  t.same(packages.filter(url => url.includes('/@opentelemetry/') && !url.includes('/@opentelemetry/api/')), [], 'not one module of the SDK, an exporter or a propagator')
  t.same(packages.filter(url => /\/src\/telemetry\/(tracing-sdk|span-recorder|otlp-)/.test(url)), [], 'nor the service\'s recorder or exporters')
  t.equal(otlp.requests, 0, 'nothing sent')
})

t.test('OTEL_EXPORTER_OTLP_ENDPOINT alone: the request\'s trace exported over http/protobuf', async t => {
  const modules = join(dir, 'on.txt')
  const server = await startServer(t, { RECORD_MODULES_FILE: modules, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '50' }, { command })
  const traceId = randomBytes(16).toString('hex')
  const res = await fetch(`${server.baseUrl}/api/jobs/${server.sampleJobId}/analytics`, { headers: { authorization: `Bearer ${server.keys.pro}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } })
  t.equal(res.status, 200)
  t.match(res.headers.get('traceresponse'), new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
  await until('the request\'s spans', () => otlp.spans.some(s => s.traceId === traceId && s.kind === 2) && otlp.spans.some(s => s.traceId === traceId && s.kind === 3), 20_000)
  const spans = otlp.spans.filter(s => s.traceId === traceId)
  const server_ = spans.find(s => s.kind === 2)!
  t.match(server_, { name: 'GET /api/jobs/:jobId/analytics', contentType: 'application/x-protobuf' })
  t.match(server_.attributes, { 'http.route': '/api/jobs/:jobId/analytics', 'http.response.status_code': 200 })
  t.equal(server_.resource['service.name'], 'screening-read-api', 'the service\'s own name by default')
  t.ok(spans.some(s => s.parentSpanId === server_.spanId && s.attributes['db.system.name'] === 'postgresql'), `SQL under the request: ${spans.filter(s => s.kind === 3).map(s => s.name).join(', ')}`)
  t.ok(loaded(modules).some(url => url.endsWith('/src/telemetry/otlp-protobuf.ts')), 'the protobuf encoder loaded')
  t.notOk(loaded(modules).some(url => url.endsWith('/src/telemetry/otlp-json.ts')), 'the JSON one not')
  t.ok(loaded(modules).some(url => url.includes('/@opentelemetry/otlp-exporter-base/')), 'OpenTelemetry\'s OTLP transport')
  t.notOk(loaded(modules).some(url => /\/@opentelemetry\/(sdk-trace|exporter-trace|otlp-transformer)/.test(url)), 'nor the SDK\'s spans, exporters or serializers: the service records its own')
})
