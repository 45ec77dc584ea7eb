import type { Attributes } from '@opentelemetry/api'
import type { RecordedSpan } from './recorded-span.js'
import { otlpKind, type Origin, type SpanEncoder } from './span-encoder.js'

// OTLP/HTTP's JSON body (the protobuf mapping: ids in hex, 64-bit integers as strings), and
// the same JSON of one span for the console exporter.

/** Epoch nanoseconds of epoch milliseconds, as a string (a 64-bit integer in OTLP/JSON): to the microsecond, as the protobuf's. */
const epochNanos = (ms: number): string => String(BigInt(Math.round(ms * 1000)) * 1000n)

function anyValue (value: unknown): Record<string, unknown> {
  if (typeof value === 'string') return { stringValue: value }
  if (typeof value === 'boolean') return { boolValue: value }
  if (typeof value === 'number') return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value }
  if (Array.isArray(value)) return { arrayValue: { values: value.filter(v => v !== null && v !== undefined).map(anyValue) } }
  return { stringValue: String(value) }
}

const keyValues = (entries: Iterable<[string, unknown]>): Array<{ key: string, value: Record<string, unknown> }> =>
  [...entries].filter(([, value]) => value !== undefined && value !== null).map(([key, value]) => ({ key, value: anyValue(value) }))
const attributes = (a: Attributes | undefined): ReturnType<typeof keyValues> => keyValues(Object.entries(a ?? {}))

/** A span as OTLP/JSON's Span object. */
export function spanJson (s: RecordedSpan): Record<string, unknown> {
  const context = s.spanContext()
  const state = context.traceState?.serialize()
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    ...(state !== undefined && state !== '' ? { traceState: state } : {}),
    ...(s.parentSpanId !== undefined ? { parentSpanId: s.parentSpanId } : {}),
    name: s.name,
    kind: otlpKind(s.kind),
    startTimeUnixNano: epochNanos(s.startMs),
    endTimeUnixNano: epochNanos(s.endMs),
    attributes: attributes({ ...s.base, ...s.own }),
    events: (s.events ?? []).map(e => ({ timeUnixNano: epochNanos(e.timeMs), name: e.name, attributes: attributes(e.attributes) })),
    links: (s.links ?? []).map(l => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: attributes(l.attributes) })),
    status: { code: s.status.code, ...(s.status.message !== undefined ? { message: s.status.message } : {}) },
  }
}

export function jsonEncoder ({ resource, scope }: Origin): SpanEncoder {
  let spans: string[] = []
  const head = `{"resourceSpans":[{"resource":${JSON.stringify({ attributes: attributes(resource) })},"scopeSpans":[{"scope":${JSON.stringify(scope)},"spans":[`
  const encoder: SpanEncoder = {
    contentType: 'application/json',
    count: 0,
    add: s => { spans.push(JSON.stringify(spanJson(s))); encoder.count++ },
    take: () => {
      const body = Buffer.from(`${head}${spans.join(',')}]}]}]}`)
      spans = []
      encoder.count = 0
      return body
    },
  }
  return encoder
}
