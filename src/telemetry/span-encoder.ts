import type { Attributes } from '@opentelemetry/api'
import type { RecordedSpan } from './recorded-span.js'

// What an OTLP encoding (otlp-protobuf.ts, otlp-json.ts) offers the sink: spans encoded as
// they end, then taken as one ExportTraceServiceRequest body.

export interface SpanEncoder {
  contentType: string
  /** Spans added since the last take. */
  count: number
  add: (span: RecordedSpan) => void
  /** The request of the spans added, the encoder emptied. */
  take: () => Uint8Array
}

/** The service and its tracer, the same for every request. */
export interface Origin { resource: Attributes, scope: { name: string, version: string } }

/** OTLP's SpanKind numbers are the API's plus one (0 is unspecified). */
export const otlpKind = (apiKind: number): number => apiKind + 1
