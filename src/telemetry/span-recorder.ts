import { randomFillSync } from 'node:crypto'
import { context as contexts, trace, type Context, type Span, type SpanOptions, type Tracer } from '@opentelemetry/api'
import { epochMs, RecordedSpan } from './recorded-span.js'
import type { Sampler } from './sampler.js'

// The tracer while tracing is on: our own, the SDK's cost being most of what a traced
// request cost (issue 57's bench). A sampled span is a RecordedSpan, handed when it ends to
// each sink (otlp-sink.ts encodes it there and then); an unsampled one is the API's
// non-recording span, carrying its context only.

/** Where ended spans go: an exporter's batch. */
export interface SpanSink {
  add: (span: RecordedSpan) => void
  /** Sends what is batched. */
  flush: () => Promise<void>
  shutdown: () => Promise<void>
}

// Ids from a pool of random bytes, refilled when spent: one system call per 512 spans.
const pool = Buffer.allocUnsafe(8192)
let used = pool.length
function randomHex (bytes: number): string {
  if (used + bytes > pool.length) { randomFillSync(pool); used = 0 }
  const hex = pool.toString('hex', used, used + bytes)
  used += bytes
  // All zeros is invalid in W3C trace context; 2^-64 at worst, but never sent.
  return /^0+$/.test(hex) ? randomHex(bytes) : hex
}

export class SpanRecorder implements Tracer {
  readonly #sampled: Sampler
  readonly #sinks: SpanSink[]
  readonly #ended = (span: RecordedSpan): void => { for (const sink of this.#sinks) sink.add(span) }

  constructor (sampled: Sampler, sinks: SpanSink[]) {
    this.#sampled = sampled
    this.#sinks = sinks
  }

  startSpan (name: string, options: SpanOptions = {}, context: Context = contexts.active()): Span {
    const parent = options.root === true ? undefined : trace.getSpanContext(context)
    const valid = parent !== undefined && trace.isSpanContextValid(parent) ? parent : undefined
    const traceId = valid?.traceId ?? randomHex(16)
    const sampled = this.#sampled(valid, traceId)
    const spanContext = { traceId, spanId: randomHex(8), traceFlags: sampled ? 1 : 0, ...(valid?.traceState !== undefined ? { traceState: valid.traceState } : {}) }
    if (!sampled) return trace.wrapSpanContext(spanContext)
    return new RecordedSpan(this.#ended, spanContext, name, options.kind ?? 0, valid?.spanId, options.attributes, options.links, epochMs(options.startTime))
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]): ReturnType<F> {
    const fn = rest[rest.length - 1] as F
    const options = rest.length > 1 ? rest[0] as SpanOptions : {}
    const parent = rest.length > 2 ? rest[1] as Context : contexts.active()
    const span = this.startSpan(name, options, parent)
    return contexts.with(trace.setSpan(parent, span), () => fn(span)) as ReturnType<F>
  }

  async flush (): Promise<void> { await Promise.all(this.#sinks.map(async sink => { await sink.flush() })) }
  async shutdown (): Promise<void> { await Promise.all(this.#sinks.map(async sink => { await sink.shutdown() })) }
}
