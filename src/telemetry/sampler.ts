import type { SpanContext } from '@opentelemetry/api'
import { ConfigError } from '../config.js'

// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as the specification defines them
// (parentbased_always_on by default); a value it does not define stops the start, rather
// than tracing otherwise than asked.

/** Whether a new span is sampled: its parent's context (a valid one, or none) and its trace id. */
export type Sampler = (parent: SpanContext | undefined, traceId: string) => boolean

const NAMES = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']

export function samplerOf (env: NodeJS.ProcessEnv): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on'
  if (!NAMES.includes(name)) throw new ConfigError(`OTEL_TRACES_SAMPLER=${name}: one of ${NAMES.join(', ')}`)
  const kind = name.replace(/^parentbased_/, '')
  let root: (traceId: string) => boolean
  if (kind === 'traceidratio') {
    const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim()
    const ratio = arg === undefined || arg === '' ? 1 : Number(arg)
    if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG=${arg}: a ratio from 0 to 1`)
    // The trace id's last 52 bits, random in W3C's ids, as a fraction: the same answer for every span of a trace.
    root = traceId => parseInt(traceId.slice(-13), 16) / 2 ** 52 < ratio
  } else {
    const on = kind === 'always_on'
    root = () => on
  }
  if (kind === name) return (_parent, traceId) => root(traceId)
  return (parent, traceId) => parent !== undefined ? (parent.traceFlags & 1) === 1 : root(traceId)
}
