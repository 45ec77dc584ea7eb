import { createTraceState } from '@opentelemetry/api'
import t from 'tap'
import { jsonEncoder } from '../../src/telemetry/otlp-json.js'
import { protobufEncoder } from '../../src/telemetry/otlp-protobuf.js'
import { RecordedSpan } from '../../src/telemetry/recorded-span.js'
import { TraceRequest } from '../helpers/otlp-receiver.js'

// The service's own OTLP encodings (issue 57: the recorder writes them, not the SDK), read
// back by an independent reader: protobufjs with opentelemetry-proto's trace messages as the
// test receiver writes them (helpers/otlp-receiver.ts), and JSON.parse; both must say the same.

const Request = TraceRequest

const origin = { resource: { 'service.name': 'under-test', 'service.instance': 7 }, scope: { name: 'screening-read-api', version: '1.2.3' } }
const traceId = '0af7651916cd43dd8448eb211c80319c'
const shared = { 'db.system.name': 'postgresql', 'db.operation.name': 'SELECT' }

function spans (): RecordedSpan[] {
  const ended: RecordedSpan[] = []
  const context = { traceId, spanId: 'b7ad6b7169203331', traceFlags: 1, traceState: createTraceState('vendor=a,other=b') }
  const parent = new RecordedSpan(s => ended.push(s), context, 'GET /api/jobs/:jobId', 1, '00f067aa0ba902b7', { 'http.route': '/api/jobs/:jobId', 'screening.text': 'é ✓ "quoted"' }, undefined, 1_764_000_000_123.456)
  parent.setAttribute('http.response.status_code', 404)
  parent.setAttribute('http.route', '/api/jobs/:jobId (set after)')
  parent.setAttributes({ 'a.negative': -42, 'a.double': 0.25, 'a.bool': false, 'a.list': ['x', 'y'] })
  parent.recordException(new TypeError('bad input'), 1_764_000_000_124)
  parent.setStatus({ code: 2, message: 'failed' })
  parent.end(1_764_000_000_125.5)
  const child = new RecordedSpan(s => ended.push(s), { traceId, spanId: '1111111111111111', traceFlags: 1 }, 'SELECT jobs', 2, 'b7ad6b7169203331', shared, [{ context: { traceId: 'ffffffffffffffffffffffffffffff01', spanId: '2222222222222222', traceFlags: 1 }, attributes: { why: 'retry' } }], 1_764_000_000_124)
  child.end(1_764_000_000_124.75)
  child.setAttribute('after.end', 'ignored')
  return ended
}

// One normal form for both readings: ids hex, 64-bit integers as strings.
const hex = (v: unknown): string => v instanceof Uint8Array ? Buffer.from(v).toString('hex') : String(v ?? '')
type Any = Record<string, unknown>
function value (v: Any): unknown {
  if ('arrayValue' in v) return ((v.arrayValue as Any).values as Any[] ?? []).map(value)
  if ('intValue' in v) return `int:${String(v.intValue)}`
  return v.stringValue ?? v.boolValue ?? v.doubleValue
}
const kv = (list: unknown): Any => Object.fromEntries(((list ?? []) as Any[]).map(a => [a.key, value(a.value as Any)]))
function normal (message: Any): Any[] {
  return (message.resourceSpans as Any[]).flatMap(rs => (rs.scopeSpans as Any[]).flatMap(ss => (ss.spans as Any[]).map(s => ({
    resource: kv((rs.resource as Any).attributes),
    scope: ss.scope,
    traceId: hex(s.traceId),
    spanId: hex(s.spanId),
    parentSpanId: hex(s.parentSpanId),
    traceState: s.traceState ?? '',
    name: s.name,
    kind: Number(s.kind),
    start: String(s.startTimeUnixNano),
    end: String(s.endTimeUnixNano),
    attributes: kv(s.attributes),
    events: ((s.events ?? []) as Any[]).map(e => ({ name: e.name, time: String(e.timeUnixNano), attributes: kv(e.attributes) })),
    links: ((s.links ?? []) as Any[]).map(l => ({ traceId: hex(l.traceId), spanId: hex(l.spanId), attributes: kv(l.attributes) })),
    status: { code: Number((s.status as Any | undefined)?.code ?? 0), message: (s.status as Any | undefined)?.message ?? '' },
  }))))
}

const ended = spans()
const decodedProtobuf = (): Any[] => {
  const encoder = protobufEncoder(origin)
  for (const s of ended) encoder.add(s)
  t.equal(encoder.count, 2)
  return normal(Request.toObject(Request.decode(encoder.take()), { longs: String, defaults: false }) as Any)
}
const decodedJson = (): Any[] => {
  const encoder = jsonEncoder(origin)
  for (const s of ended) encoder.add(s)
  return normal(JSON.parse(Buffer.from(encoder.take()).toString('utf8')) as Any)
}

t.test('protobuf and JSON carry the same spans, as OTLP defines them', async t => {
  const [proto, json] = [decodedProtobuf(), decodedJson()]
  t.same(proto, json, 'the two encodings agree')
  const [parent, child] = proto as [Any, Any]
  t.match(parent, {
    resource: { 'service.name': 'under-test', 'service.instance': 'int:7' },
    scope: { name: 'screening-read-api', version: '1.2.3' },
    traceId,
    spanId: 'b7ad6b7169203331',
    parentSpanId: '00f067aa0ba902b7',
    traceState: 'vendor=a,other=b',
    name: 'GET /api/jobs/:jobId',
    kind: 2,
    start: '1764000000123456000',
    end: '1764000000125500000',
    status: { code: 2, message: 'failed' },
  })
  t.same(parent.attributes, { 'http.route': '/api/jobs/:jobId (set after)', 'screening.text': 'é ✓ "quoted"', 'http.response.status_code': 'int:404', 'a.negative': 'int:-42', 'a.double': 0.25, 'a.bool': false, 'a.list': ['x', 'y'] }, 'a key set after the start wins; every value type')
  t.match(parent.events, [{ name: 'exception', time: '1764000000124000000', attributes: { 'exception.type': 'TypeError', 'exception.message': 'bad input' } }])
  t.match(child, { kind: 3, parentSpanId: 'b7ad6b7169203331', start: '1764000000124000000', end: '1764000000124750000', status: { code: 0 } })
  t.same(child.attributes, shared, 'nothing set after the end')
  t.same(child.links, [{ traceId: 'ffffffffffffffffffffffffffffff01', spanId: '2222222222222222', attributes: { why: 'retry' } }])
  t.same(shared, { 'db.system.name': 'postgresql', 'db.operation.name': 'SELECT' }, 'the caller\'s attributes untouched')
})

t.test('a batch taken empties the encoder; a large one grows its buffer', async t => {
  const encoder = protobufEncoder(origin)
  const many: RecordedSpan[] = []
  for (let i = 0; i < 2000; i++) {
    const s = new RecordedSpan(() => {}, { traceId, spanId: i.toString(16).padStart(16, '0'), traceFlags: 1 }, `span ${i} ${'x'.repeat(100)}`, 0, undefined, { i }, undefined, 1_764_000_000_000 + i)
    s.end(1_764_000_000_001 + i)
    many.push(s)
  }
  for (const s of many) encoder.add(s)
  const spansOf = (body: Uint8Array): Any[] => normal(Request.toObject(Request.decode(body), { longs: String }) as Any)
  const first = spansOf(encoder.take())
  t.equal(first.length, 2000)
  t.same(first[1999]!.attributes, { i: 'int:1999' })
  t.equal(encoder.count, 0)
  encoder.add(many[0]!)
  t.same(spansOf(encoder.take()).map(s => s.spanId), ['0000000000000000'], 'the next batch holds only what came after')
})
