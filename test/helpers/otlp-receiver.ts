import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import protobuf from 'protobufjs'

// An OTLP/HTTP trace receiver on 127.0.0.1, as a collector would be: it decodes what it is
// sent, http/json as the OTLP specification writes it and http/protobuf with a schema of
// its own (the subset of opentelemetry-proto's trace messages below, not the exporter's
// code), into one list of spans.

const PROTO = `
syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; repeated Event events = 11; repeated Link links = 13; Status status = 15;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Link { bytes trace_id = 1; bytes span_id = 2; repeated KeyValue attributes = 4; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message ArrayValue { repeated AnyValue values = 1; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; } }
`
/** OTLP/HTTP's protobuf request, read with the schema above (also the encoders' unit test's reader). */
export const TraceRequest = protobuf.parse(PROTO, { keepCase: false }).root.lookupType('ExportTraceServiceRequest')
const Request = TraceRequest

export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** '' for a root span. */
  parentSpanId: string
  name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number
  attributes: Record<string, string | number | boolean>
  links: Array<{ traceId: string, spanId: string }>
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number
  resource: Record<string, string | number | boolean>
  contentType: string
}

export interface OtlpReceiver {
  url: string
  spans: ReceivedSpan[]
  /** Requests received, whatever they held. */
  requests: number
  close: () => Promise<void>
}

type Value = Record<string, unknown> | undefined
const valueOf = (v: Value): string | number | boolean => {
  if (v === undefined) return ''
  const raw = v.stringValue ?? v.boolValue ?? v.doubleValue ?? v.intValue
  return typeof raw === 'object' && raw !== null ? Number(String(raw)) : typeof raw === 'string' && 'intValue' in v ? Number(raw) : raw as string | number | boolean
}
const attributesOf = (list: unknown): Record<string, string | number | boolean> =>
  Object.fromEntries(((list ?? []) as Array<{ key: string, value: Value }>).map(a => [a.key, valueOf(a.value)]))
const hex = (id: unknown): string => id instanceof Uint8Array ? Buffer.from(id).toString('hex') : String(id ?? '')

/** The spans of one export request, JSON (camelCase, ids in hex) or decoded protobuf (ids as bytes). */
function spansOf (message: Record<string, unknown>, contentType: string): ReceivedSpan[] {
  const spans: ReceivedSpan[] = []
  for (const rs of (message.resourceSpans ?? []) as Array<Record<string, unknown>>) {
    const resource = attributesOf((rs.resource as Record<string, unknown> | undefined)?.attributes)
    for (const ss of (rs.scopeSpans ?? []) as Array<Record<string, unknown>>) {
      for (const s of (ss.spans ?? []) as Array<Record<string, unknown>>) {
        spans.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          attributes: attributesOf(s.attributes),
          links: ((s.links ?? []) as Array<Record<string, unknown>>).map(l => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
          status: Number((s.status as Record<string, unknown> | undefined)?.code ?? 0),
          resource,
          contentType,
        })
      }
    }
  }
  return spans
}

export async function startOtlpReceiver (): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = { url: '', spans: [], requests: 0, close: async () => { await new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => { resolve() }) }) } }
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (c: Buffer) => chunks.push(c))
    request.on('end', () => {
      receiver.requests++
      const body = Buffer.concat(chunks)
      const type = String(request.headers['content-type'] ?? '')
      if (request.method !== 'POST' || request.url !== '/v1/traces') { response.writeHead(404).end(); return }
      const message = type.startsWith('application/json')
        ? JSON.parse(body.toString()) as Record<string, unknown>
        : Request.toObject(Request.decode(body), { longs: String }) as Record<string, unknown>
      receiver.spans.push(...spansOf(message, type))
      response.writeHead(200, { 'content-type': type.startsWith('application/json') ? 'application/json' : 'application/x-protobuf' }).end(type.startsWith('application/json') ? '{}' : '')
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return receiver
}
