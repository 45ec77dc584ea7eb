import * as api from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { envDetector, resourceFromAttributes, detectResources } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { ConfigError } from '../config.js'
import { version } from '../version.js'
import { exporterNames } from './exporter-names.js'

// OpenTelemetry's SDK as the service starts it when traces are asked for (tracing.ts): the
// provider alone, no auto-instrumentation (measured to double a request's CPU even unsampled:
// issue 57), W3C trace context, spans batched to an OTLP exporter over HTTP.

/** The exporters the variables name, the only ones loaded: OTLP over http/protobuf (the default) or http/json, or the console. */
async function exportersOf (env: NodeJS.ProcessEnv): Promise<SpanExporter[]> {
  // A list, as the specification allows (`otlp,console`); empty or unset: otlp.
  const names = exporterNames(env).filter(name => name !== 'none')
  const protocol = [env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, env.OTEL_EXPORTER_OTLP_PROTOCOL].map(p => p?.trim()).find(p => p !== undefined && p !== '') ?? 'http/protobuf'
  return await Promise.all((names.length > 0 ? names : ['otlp']).map(async name => {
    if (name === 'console') return new ConsoleSpanExporter()
    if (name !== 'otlp') throw new ConfigError(`OTEL_TRACES_EXPORTER=${name}: this service exports traces over OTLP ("otlp"), to the console ("console") or not at all ("none")`)
    if (protocol === 'http/protobuf') return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter()
    if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter()
    throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: this service exports OTLP over http/protobuf or http/json (gRPC is not included)`)
  }))
}

/** What the call sites use of OpenTelemetry once it is started (tracing.ts). */
export interface Tracing {
  api: typeof api
  tracer: api.Tracer
  /** Exports what is left, then stops. */
  shutdown: () => Promise<void>
}

export async function startSdk (env: NodeJS.ProcessEnv): Promise<Tracing> {
  const exporters = await exportersOf(env)
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over these defaults.
  const resource = resourceFromAttributes({ 'service.name': 'screening-read-api', 'service.version': version }).merge(detectResources({ detectors: [envDetector] }))
  // The sampler comes from OTEL_TRACES_SAMPLER (parent-based, always on, by default).
  const provider = new BasicTracerProvider({ resource, spanProcessors: exporters.map(exporter => new BatchSpanProcessor(exporter)) })
  const contextManager = new AsyncLocalStorageContextManager().enable()
  api.context.setGlobalContextManager(contextManager)
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  api.trace.setGlobalTracerProvider(provider)
  return {
    api,
    tracer: provider.getTracer('screening-read-api', version),
    shutdown: async () => {
      await provider.shutdown()
      api.trace.disable()
      api.propagation.disable()
      api.context.disable()
    },
  }
}
