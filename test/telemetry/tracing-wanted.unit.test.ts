import t from 'tap'
import { tracingWanted } from '../../src/telemetry/tracing.js'

// When the standard variables turn tracing on (docs/operations.md, "Traces").
const endpoint = 'http://127.0.0.1:4318'
const cases: Array<[NodeJS.ProcessEnv, boolean, string]> = [
  [{}, false, 'nothing set: off'],
  [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, true, 'an endpoint'],
  [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint }, true, 'a traces endpoint'],
  [{ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false, 'a blank endpoint is none'],
  [{ OTEL_TRACES_EXPORTER: 'console' }, true, 'an exporter named'],
  [{ OTEL_TRACES_EXPORTER: 'otlp,console' }, true, 'a list of exporters'],
  [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, false, 'exporter none wins over an endpoint'],
  [{ OTEL_TRACES_EXPORTER: '', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, true, 'an empty exporter is unset'],
  [{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, false, 'OTEL_SDK_DISABLED=true wins'],
  [{ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, true, 'OTEL_SDK_DISABLED=false does not'],
]
for (const [env, wanted, what] of cases) t.equal(tracingWanted(env), wanted, what)
