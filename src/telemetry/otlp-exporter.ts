import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http'
import { ConfigError } from '../config.js'
import type { SpanSink } from './span-recorder.js'
import type { Origin, SpanEncoder } from './span-encoder.js'

// Spans over OTLP/HTTP: encoded as they end (otlp-protobuf.ts, otlp-json.ts), sent in
// batches by OpenTelemetry's own transport (its OTEL_EXPORTER_OTLP_* variables: endpoint,
// headers, timeout, compression; its retries), batched as OTEL_BSP_* says.

interface Batch { body: Uint8Array, count: number }

function positive (env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim()
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value <= 0) throw new ConfigError(`${name}=${raw}: a positive whole number`)
  return value
}

/** The exporter of one protocol, its encoder loaded only when asked for. */
export async function otlpExporter (protocol: string, origin: Origin, env: NodeJS.ProcessEnv): Promise<SpanSink> {
  let encoder: SpanEncoder
  if (protocol === 'http/protobuf') encoder = (await import('./otlp-protobuf.js')).protobufEncoder(origin)
  else if (protocol === 'http/json') encoder = (await import('./otlp-json.js')).jsonEncoder(origin)
  else throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: this service exports OTLP over http/protobuf or http/json (gRPC is not included)`)
  const delayMs = positive(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000)
  const batchSize = positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512)
  const delegate = createOtlpHttpExportDelegate<Batch, unknown>(
    convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': encoder.contentType }),
    // The body is made as the spans end: the "serializer" hands it over.
    { serializeRequest: batch => batch.body, deserializeResponse: () => ({}) },
    'otlp_http_span_exporter',
    { name: 'span', countItems: batch => batch.count },
    undefined
  )
  // Failures are the transport's to retry; past that the batch is dropped, as the SDK's are.
  const send = (): void => {
    if (encoder.count === 0) return
    const count = encoder.count
    delegate.export({ body: encoder.take(), count }, () => {})
  }
  const timer = setInterval(send, delayMs).unref()
  return {
    add: span => {
      encoder.add(span)
      if (encoder.count >= batchSize) send()
    },
    flush: async () => { send(); await delegate.forceFlush() },
    shutdown: async () => { clearInterval(timer); send(); await delegate.shutdown() },
  }
}
