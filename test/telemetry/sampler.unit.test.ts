import { randomBytes } from 'node:crypto'
import t from 'tap'
import { samplerOf } from '../../src/telemetry/sampler.js'

// OTEL_TRACES_SAMPLER as the specification defines its values (issue 57: the service's own
// recorder reads it, not the SDK).

const sampledParent = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 }
const unsampledParent = { ...sampledParent, traceFlags: 0 }
const ids = Array.from({ length: 4000 }, () => randomBytes(16).toString('hex'))
const share = (sampled: (id: string) => boolean): number => ids.filter(sampled).length / ids.length

t.test('the default follows the parent, and samples a new trace', async t => {
  const sampled = samplerOf({})
  t.equal(sampled(undefined, ids[0]!), true)
  t.equal(sampled(sampledParent, ids[0]!), true)
  t.equal(sampled(unsampledParent, ids[0]!), false, 'a caller\'s unsampled trace stays unsampled')
})

t.test('always_on and always_off ignore the parent; parentbased_always_off samples only under a sampled parent', async t => {
  t.equal(samplerOf({ OTEL_TRACES_SAMPLER: 'always_on' })(unsampledParent, ids[0]!), true)
  t.equal(samplerOf({ OTEL_TRACES_SAMPLER: 'always_off' })(sampledParent, ids[0]!), false)
  const off = samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })
  t.same([off(undefined, ids[0]!), off(sampledParent, ids[0]!), off(unsampledParent, ids[0]!)], [false, true, false])
})

t.test('traceidratio samples about its share of traces, the same answer for one trace id', async t => {
  const quarter = samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })
  const got = share(id => quarter(undefined, id))
  t.ok(got > 0.2 && got < 0.3, `0.25 asked, ${got} sampled`)
  t.equal(share(id => samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })(undefined, id)), 0)
  t.equal(share(id => samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio' })(undefined, id)), 1, 'no argument: 1, as the specification says')
  const again = samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })
  t.ok(ids.every(id => quarter(undefined, id) === again(undefined, id)), 'deterministic: the same ids, the same answers')
  const based = samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })
  t.equal(based(sampledParent, ids[0]!), true, 'a sampled parent wins over the ratio')
})

t.test('a value the specification does not define stops the start, naming it', async t => {
  t.throws(() => samplerOf({ OTEL_TRACES_SAMPLER: 'sometimes' }), /OTEL_TRACES_SAMPLER=sometimes: one of always_on/)
  t.throws(() => samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }), /OTEL_TRACES_SAMPLER_ARG=1.5/)
  t.throws(() => samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }), /a ratio from 0 to 1/)
})
