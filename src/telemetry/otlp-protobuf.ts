import type { Attributes } from '@opentelemetry/api'
import { ProtobufWriter } from './protobuf-writer.js'
import type { RecordedSpan } from './recorded-span.js'
import { otlpKind, type Origin, type SpanEncoder } from './span-encoder.js'

// OTLP/HTTP's protobuf body (opentelemetry-proto's trace/v1 and common/v1 field numbers),
// written straight from the recorder's spans: each span encoded when it ends, the batch's
// envelope (resource, scope) around them when it is sent.

function anyValue (w: ProtobufWriter, field: number, value: unknown): void {
  w.open(field)
  if (typeof value === 'string') w.string(1, value)
  else if (typeof value === 'boolean') { w.tag(2, 0); w.varint(value ? 1 : 0) } else if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) w.int64(3, value)
    else w.double(4, value)
  } else if (Array.isArray(value)) {
    w.open(5) // ArrayValue
    for (const item of value) if (item !== null && item !== undefined) anyValue(w, 1, item)
    w.close()
  } else w.string(1, String(value))
  w.close()
}

function keyValue (w: ProtobufWriter, field: number, key: string, value: unknown): void {
  if (value === undefined || value === null) return
  w.open(field)
  w.string(1, key)
  anyValue(w, 2, value)
  w.close()
}

/** Attributes as repeated KeyValue; those of `over` win over the same keys of `attributes` (plain loops: this is the hot path). */
function keyValues (w: ProtobufWriter, field: number, attributes: Attributes | undefined, over?: Attributes): void {
  if (attributes !== undefined) for (const key in attributes) if (over === undefined || !(key in over)) keyValue(w, field, key, attributes[key])
  if (over !== undefined) for (const key in over) keyValue(w, field, key, over[key])
}

/** One Span message, as field 2 of ScopeSpans. */
function span (w: ProtobufWriter, s: RecordedSpan): void {
  const context = s.spanContext()
  w.open(2)
  w.hex(1, context.traceId)
  w.hex(2, context.spanId)
  const state = context.traceState?.serialize()
  if (state !== undefined && state !== '') w.string(3, state)
  if (s.parentSpanId !== undefined) w.hex(4, s.parentSpanId)
  w.string(5, s.name)
  w.tag(6, 0)
  w.varint(otlpKind(s.kind))
  w.nanos(7, s.startMs)
  w.nanos(8, s.endMs)
  keyValues(w, 9, s.base, s.own)
  for (const event of s.events ?? []) {
    w.open(11)
    w.nanos(1, event.timeMs)
    w.string(2, event.name)
    keyValues(w, 3, event.attributes)
    w.close()
  }
  for (const link of s.links ?? []) {
    w.open(13)
    w.hex(1, link.context.traceId)
    w.hex(2, link.context.spanId)
    keyValues(w, 4, link.attributes)
    w.close()
  }
  if (s.status.code !== 0) {
    w.open(15)
    if (s.status.message !== undefined && s.status.message !== '') w.string(2, s.status.message)
    w.tag(3, 0)
    w.varint(s.status.code)
    w.close()
  }
  w.close()
}

export function protobufEncoder ({ resource, scope }: Origin): SpanEncoder {
  const spans = new ProtobufWriter()
  const envelope = new ProtobufWriter()
  // Resource (field 1 of ResourceSpans) and InstrumentationScope (field 1 of ScopeSpans), once.
  keyValues(envelope, 1, resource)
  const resourceBody = envelope.take()
  envelope.string(1, scope.name)
  envelope.string(2, scope.version)
  const scopeBody = envelope.take()
  const encoder: SpanEncoder = {
    contentType: 'application/x-protobuf',
    count: 0,
    add: s => { span(spans, s); encoder.count++ },
    take: () => {
      envelope.open(1) // ResourceSpans
      envelope.bytes(1, resourceBody)
      envelope.open(2) // ScopeSpans
      envelope.bytes(1, scopeBody)
      // The spans, each already written as field 2 of ScopeSpans.
      envelope.raw(spans.buffer.subarray(0, spans.length))
      spans.length = 0
      envelope.close()
      envelope.close()
      encoder.count = 0
      return envelope.take()
    },
  }
  return encoder
}
