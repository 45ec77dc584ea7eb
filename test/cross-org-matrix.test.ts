import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from './helpers/app.js'
import { createJob, createScreens, createTenant, type Tenant } from './helpers/fixtures.js'

// OWASP API1 (broken object-level authorization), cell by cell: every operation that takes
// an id × the caller's own job, another organization's, a missing one, a malformed one ×
// a Pro, a free and no credential.

const { app, prisma } = await buildTestApp(t)
const pro = await createTenant(prisma, { plan: 'pro' })
const free = await createTenant(prisma, { plan: 'free' })
const outsider = await createTenant(prisma, { plan: 'pro' })
const jobs = new Map<Tenant, string>()
for (const tenant of [pro, free, outsider]) {
  const job = await createJob(prisma, tenant, { questions: 2 })
  await createScreens(prisma, job.id, [{ status: 'completed', score: 50, completedAt: new Date() }, { status: 'expired' }])
  jobs.set(tenant, job.id)
}

type Caller = 'pro' | 'free' | 'none'
type Target = 'own' | 'other' | 'missing' | 'malformed'
const callers: Record<Caller, Tenant | undefined> = { pro, free, none: undefined }
const idFor = (caller: Caller, target: Target): string => {
  const self = callers[caller] ?? pro
  if (target === 'own') return jobs.get(self)!
  if (target === 'other') return jobs.get(outsider)!
  return target === 'missing' ? randomUUID() : 'not-a-uuid'
}
const expected: Record<string, Record<Caller, Record<Target, number>>> = {
  '/api/jobs/{id}': {
    pro: { own: 200, other: 404, missing: 404, malformed: 400 },
    free: { own: 200, other: 404, missing: 404, malformed: 400 },
    none: { own: 401, other: 401, missing: 401, malformed: 401 },
  },
  '/api/jobs/{id}/analytics': {
    pro: { own: 200, other: 404, missing: 404, malformed: 400 },
    free: { own: 403, other: 403, missing: 403, malformed: 400 },
    none: { own: 401, other: 401, missing: 401, malformed: 401 },
  },
}

t.test('every cell has its expected status; another organization\'s job is byte-identical to a missing one', async t => {
  let cells = 0
  for (const [template, byCaller] of Object.entries(expected)) {
    for (const [caller, byTarget] of Object.entries(byCaller) as Array<[Caller, Record<Target, number>]>) {
      const headers = callers[caller]?.auth ?? {}
      const bodies: Partial<Record<Target, string>> = {}
      for (const [target, status] of Object.entries(byTarget) as Array<[Target, number]>) {
        const res = await app.inject({ url: template.replace('{id}', idFor(caller, target)), headers })
        t.equal(res.statusCode, status, `${template} ${caller} ${target}`)
        bodies[target] = res.body.replace(/"request_id":"[^"]+"/, '')
        cells++
      }
      t.equal(bodies.other, bodies.missing, `${template} ${caller}: other organization's job = missing job`)
    }
  }
  t.comment(`cross-organization matrix: ${cells} cells checked`)
})

t.test('no list page ever holds another organization\'s row', async t => {
  for (const tenant of [pro, free, outsider]) {
    const mine = new Set([jobs.get(tenant)])
    let cursor: string | null = null
    do {
      const res = await app.inject({ url: `/api/jobs?limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, headers: tenant.auth })
      const body = res.json() as { data: Array<{ id: string }>, next_cursor: string | null }
      for (const row of body.data) t.ok(mine.has(row.id), 'own row')
      cursor = body.next_cursor
    } while (cursor !== null)
  }
})
