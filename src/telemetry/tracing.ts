import type { Attributes, Context, Link, Span } from '@opentelemetry/api'
import { exporterNames } from './exporter-names.js'
import { traceparentOf } from './traceparent.js'
import type { Tracing } from './tracing-sdk.js'

export type { Tracing }

// Traces, off by default. Off, nothing of OpenTelemetry is loaded and no hook is added: the
// spans' call sites cost a branch (issue 57's bench: within 3 % of a build without them).
// On (the standard OTEL_* variables: tracingWanted), tracing-sdk.ts is imported at start.

let current: Tracing | undefined

/** The started tracing; undefined while it is off. */
export const tracing = (): Tracing | undefined => current

const truthy = (value: string | undefined): boolean => value !== undefined && /^(true|1)$/i.test(value.trim())

/**
 * Whether the environment asks for traces, as the OpenTelemetry variables say: an OTLP
 * endpoint or `OTEL_TRACES_EXPORTER` naming an exporter; never with `OTEL_SDK_DISABLED=true`
 * or `OTEL_TRACES_EXPORTER=none`.
 */
export function tracingWanted (env: NodeJS.ProcessEnv = process.env): boolean {
  if (truthy(env.OTEL_SDK_DISABLED)) return false
  const exporters = exporterNames(env)
  if (exporters.length > 0) return exporters.some(name => name !== 'none')
  return [env.OTEL_EXPORTER_OTLP_ENDPOINT, env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT].some(v => v !== undefined && v.trim() !== '')
}

/** Starts tracing when the environment asks for it (once per process); undefined when it does not. */
export async function startTracing (env: NodeJS.ProcessEnv = process.env): Promise<Tracing | undefined> {
  if (current !== undefined || !tracingWanted(env)) return current
  const { startSdk } = await import('./tracing-sdk.js')
  current = await startSdk(env)
  return current
}

/** Stops tracing (exporting what is left); a no-op while it is off. */
export async function stopTracing (): Promise<void> {
  const stopping = current
  current = undefined
  await stopping?.shutdown()
}

export interface SpanOptions {
  attributes?: Attributes
  kind?: 'client' | 'internal'
  /** The parent's `traceparent` (carried in a job), or null for a new trace; the active span by default. */
  parent?: string | null
  /** Spans this one follows from (their `traceparent`s), in other traces. */
  links?: string[]
}

/**
 * Runs `fn` in a span (a child of the active one, or of `parent`), ended when it settles, an
 * error recorded; while tracing is off, `fn` alone, given no span.
 */
export async function inSpan<T> (name: string, spanOptions: SpanOptions | (() => SpanOptions), fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  const t = current
  if (t === undefined) return await fn(undefined)
  const options = typeof spanOptions === 'function' ? spanOptions() : spanOptions
  const { api } = t
  const parent = options.parent === undefined ? api.context.active() : options.parent === null ? api.ROOT_CONTEXT : contextOf(t, options.parent)
  const links: Link[] = (options.links ?? []).map(l => api.trace.getSpanContext(contextOf(t, l))).filter(c => c !== undefined).map(context => ({ context }))
  const span = t.tracer.startSpan(name, {
    kind: options.kind === 'client' ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL,
    ...(options.attributes !== undefined ? { attributes: options.attributes } : {}),
    ...(links.length > 0 ? { links } : {}),
  }, parent)
  try {
    return await t.api.context.with(t.api.trace.setSpan(parent, span), async () => await fn(span))
  } catch (error) {
    failed(span, error)
    throw error
  } finally {
    span.end()
  }
}

const contextOf = (t: Tracing, traceparent: string): Context => t.api.propagation.extract(t.api.ROOT_CONTEXT, { traceparent })

/** Marks `span` as failed by `error` (an exception, or what went wrong). */
export function failed (span: Span, error: unknown): void {
  const t = current
  if (t === undefined) return
  if (typeof error !== 'string') span.recordException(error instanceof Error ? error : String(error))
  span.setStatus({ code: t.api.SpanStatusCode.ERROR, message: (error instanceof Error ? error.message : String(error)).slice(0, 300) })
}

/** The active span's `traceparent`, to carry in a job or a header; undefined when there is none. */
export function activeTraceparent (): string | undefined {
  const t = current
  if (t === undefined) return undefined
  const active = t.api.trace.getSpanContext(t.api.context.active())
  return active !== undefined && t.api.trace.isSpanContextValid(active) ? traceparentOf(active) : undefined
}

/**
 * A span for work already done, from `startTime` (epoch ms) to now, in a new trace: its
 * `traceparent`, for what the work handed on to link to; undefined while tracing is off.
 */
export function pastSpan (name: string, startTime: number, attributes: Attributes): string | undefined {
  const t = current
  if (t === undefined) return undefined
  const span = t.tracer.startSpan(name, { startTime, attributes }, t.api.ROOT_CONTEXT)
  span.end()
  return traceparentOf(span.spanContext())
}
