import * as api from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { ConfigError } from '../config.js'
import { version } from '../version.js'
import { exporterNames } from './exporter-names.js'
import { otlpExporter } from './otlp-exporter.js'
import { samplerOf } from './sampler.js'
import { SpanRecorder, type SpanSink } from './span-recorder.js'
import type { Origin } from './span-encoder.js'

// Tracing as the service starts it when traces are asked for (tracing.ts): OpenTelemetry's
// API, context and W3C propagator, with our own recorder for the spans (span-recorder.ts:
// the SDK's spans and serializer cost most of a traced request, issue 57) exported over
// OTLP/HTTP; no auto-instrumentation (measured to double a request's CPU even unsampled).

/** The sinks the variables name: OTLP over http/protobuf (the default) or http/json, or the console. */
async function sinksOf (env: NodeJS.ProcessEnv, origin: Origin): Promise<SpanSink[]> {
  // A list, as the specification allows (`otlp,console`); empty or unset: otlp.
  const names = exporterNames(env).filter(name => name !== 'none')
  const protocol = [env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, env.OTEL_EXPORTER_OTLP_PROTOCOL].map(p => p?.trim()).find(p => p !== undefined && p !== '') ?? 'http/protobuf'
  return await Promise.all((names.length > 0 ? names : ['otlp']).map(async (name): Promise<SpanSink> => {
    // One JSON line per span, OTLP/JSON's span, between the log's lines.
    if (name === 'console') {
      const { spanJson } = await import('./otlp-json.js')
      return { add: span => { process.stdout.write(`${JSON.stringify(spanJson(span))}\n`) }, flush: async () => {}, shutdown: async () => {} }
    }
    if (name !== 'otlp') throw new ConfigError(`OTEL_TRACES_EXPORTER=${name}: this service exports traces over OTLP ("otlp"), to the console ("console") or not at all ("none")`)
    return await otlpExporter(protocol, origin, env)
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
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over these defaults.
  const resource = resourceFromAttributes({ 'service.name': 'screening-read-api', 'service.version': version }).merge(detectResources({ detectors: [envDetector] }))
  const recorder = new SpanRecorder(samplerOf(env), await sinksOf(env, { resource: resource.attributes, scope: { name: 'screening-read-api', version } }))
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  // For pg-boss's own spans (its jobs sent, received, processed), under the service's scope.
  api.trace.setGlobalTracerProvider({ getTracer: () => recorder })
  return {
    api,
    tracer: recorder,
    shutdown: async () => {
      await recorder.shutdown()
      api.trace.disable()
      api.propagation.disable()
      api.context.disable()
    },
  }
}
