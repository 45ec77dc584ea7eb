// OTEL_TRACES_EXPORTER as the specification reads it: a comma-separated list, blanks ignored;
// read by the switch (tracing.ts) and the SDK's start (tracing-sdk.ts) alike.

/** The exporters OTEL_TRACES_EXPORTER names (`none` among them); empty when it is unset or blank. */
export const exporterNames = (env: NodeJS.ProcessEnv): string[] =>
  (env.OTEL_TRACES_EXPORTER ?? '').split(',').map(name => name.trim()).filter(name => name !== '')
