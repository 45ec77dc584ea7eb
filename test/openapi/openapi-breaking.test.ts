import { readFileSync } from 'node:fs'
import t from 'tap'
import { breakingChanges } from '../../scripts/openapi-breaking.js'

// The breaking-change check, on fixtures made by breaking the released document on purpose.
interface Json { [key: string]: any }
const baseline = JSON.parse(readFileSync(new URL('../../openapi/baseline.json', import.meta.url), 'utf8')) as Json
const current = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')) as Json
const mutate = (edit: (doc: Json) => void): Json => { const doc = structuredClone(baseline); edit(doc); return doc }
const analytics = (doc: Json) => doc.paths['/api/jobs/{jobId}/analytics'].get
const list = (doc: Json) => doc.paths['/api/jobs'].get

t.test('the current document does not break the baseline', async t => {
  t.same(breakingChanges(baseline, current), [])
})

t.test('each kind of breaking change is caught', async t => {
  const cases: Record<string, [(doc: Json) => void, RegExp]> = {
    'removed operation': [doc => { delete doc.paths['/api/me'] }, /GET \/api\/me: operation removed/],
    'removed response field': [doc => { delete doc.components.schemas.Job.properties.share_token }, /field \/properties\/share_token removed/],
    'changed field type': [doc => { doc.components.schemas.JobAnalytics.properties.total_interviews.type = 'string' }, /type of \/properties\/total_interviews changed/],
    'removed enum value': [doc => { const p = list(doc).parameters.find((p: Json) => p.name === 'status'); p.schema.enum = p.schema.enum.filter((v: string) => v !== 'closed') }, /enum value/],
    'new required parameter': [doc => { list(doc).parameters.push({ name: 'region', in: 'query', required: true, schema: { type: 'string', maxLength: 10 } }) }, /new required parameter region/],
    'optional parameter made required': [doc => { analytics(doc).parameters.find((p: Json) => p.name === 'tz').required = true }, /parameter tz became required/],
    'removed parameter': [doc => { list(doc).parameters = list(doc).parameters.filter((p: Json) => p.name !== 'cursor') }, /parameter cursor removed/],
    'removed response status': [doc => { delete analytics(doc).responses['403'] }, /403 removed/],
    'response field no longer required': [doc => { doc.components.schemas.Job.required = doc.components.schemas.Job.required.filter((f: string) => f !== 'slug') }, /"slug" no longer always present/],
  }
  for (const [name, [edit, expected]] of Object.entries(cases)) {
    const found = breakingChanges(baseline, mutate(edit))
    t.ok(found.some(f => expected.test(f)), `${name}: ${found.join(' | ') || 'nothing found'}`)
  }
})

t.test('additive changes are not breaking', async t => {
  const additive = mutate(doc => {
    doc.components.schemas.Job.properties.archived_at = { type: ['string', 'null'], maxLength: 30 }
    list(doc).parameters.push({ name: 'q', in: 'query', required: false, schema: { type: 'string', maxLength: 100 } })
    doc.paths['/api/jobs/{jobId}/questions'] = { get: structuredClone(doc.paths['/api/me'].get) }
    doc.info.description += ' More words.'
  })
  t.same(breakingChanges(baseline, additive), [])
})
