import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildTestApp } from './helpers/app.js'
import { createJob, createScreens, createTenant, type Tenant } from './helpers/fixtures.js'

// OWASP API1 (broken object-level authorization), cell by cell: every operation that takes
// an id × the caller's own job, another organization's, a missing one, a malformed one ×
// a Pro, a free and no credential; and the list × no cursor, the caller's own, another
// organization's, a forged and a garbled one × the same callers.

const { app, prisma } = await buildTestApp(t)
const pro = await createTenant(prisma, { plan: 'pro' })
const free = await createTenant(prisma, { plan: 'free' })
const outsider = await createTenant(prisma, { plan: 'pro' })
const jobs = new Map<Tenant, string>()
const owned = new Map<Tenant, Set<string>>()
for (const tenant of [pro, free, outsider]) {
  const job = await createJob(prisma, tenant, { questions: 2 })
  await createScreens(prisma, job.id, [{ status: 'completed', score: 50, completedAt: new Date() }, { status: 'expired' }])
  jobs.set(tenant, job.id)
  owned.set(tenant, new Set([job.id, (await createJob(prisma, tenant)).id])) // two pages for cursors
}
let cells = 0

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
})

type CursorCase = 'none' | 'own' | 'other' | 'forged' | 'garbled'
const cursorOf = async (tenant: Tenant): Promise<string> => (await app.inject({ url: '/api/jobs?limit=1', headers: tenant.auth })).json().next_cursor as string
const cursors: Record<Caller, Record<CursorCase, string | undefined>> = Object.fromEntries(await Promise.all((Object.entries(callers) as Array<[Caller, Tenant | undefined]>).map(async ([caller, tenant]) => {
  const own = await cursorOf(tenant ?? pro)
  const other = await cursorOf(outsider)
  const [body, signature] = own.split('.') as [string, string]
  // The caller's cursor rewritten to point into the other organization, its signature kept.
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>
  const forged = `${Buffer.from(JSON.stringify({ ...payload, o: outsider.organizationId })).toString('base64url')}.${signature}`
  return [caller, { none: undefined, own, other, forged, garbled: `${body}.${signature.slice(0, -2)}AA` }]
}))) as Record<Caller, Record<CursorCase, string | undefined>>
const listExpected: Record<Caller, Record<CursorCase, number>> = {
  pro: { none: 200, own: 200, other: 400, forged: 400, garbled: 400 },
  free: { none: 200, own: 200, other: 400, forged: 400, garbled: 400 },
  none: { none: 401, own: 401, other: 401, forged: 401, garbled: 401 },
}

t.test('the list × cursors: only the caller\'s own cursor pages, and never into another organization', async t => {
  let rows = 0
  let foreign = 0
  for (const [caller, byCursor] of Object.entries(listExpected) as Array<[Caller, Record<CursorCase, number>]>) {
    const tenant = callers[caller]
    for (const [name, status] of Object.entries(byCursor) as Array<[CursorCase, number]>) {
      const cursor = cursors[caller][name]
      const res = await app.inject({ url: `/api/jobs?limit=1${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, headers: tenant?.auth ?? {} })
      t.equal(res.statusCode, status, `list ${caller} cursor ${name}`)
      cells++
      if (res.statusCode !== 200) { t.notOk('data' in res.json(), `list ${caller} cursor ${name}: no rows`); continue }
      for (const row of (res.json() as { data: Array<{ id: string }> }).data) {
        rows++
        if (!owned.get(tenant!)!.has(row.id)) foreign++
      }
    }
  }
  t.equal(foreign, 0, `0 foreign rows in ${rows} listed`)
  t.comment(`cross-organization matrix: ${cells} cells checked, ${rows} rows listed, ${foreign} foreign`)
})

t.test('no list page ever holds another organization\'s row', async t => {
  for (const tenant of [pro, free, outsider]) {
    const mine = owned.get(tenant)!
    let cursor: string | null = null
    do {
      const res = await app.inject({ url: `/api/jobs?limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, headers: tenant.auth })
      const body = res.json() as { data: Array<{ id: string }>, next_cursor: string | null }
      for (const row of body.data) t.ok(mine.has(row.id), 'own row')
      cursor = body.next_cursor
    } while (cursor !== null)
  }
})
