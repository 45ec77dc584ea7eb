import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createScreens, createTenant, keyWithScopes, type Tenant } from '../helpers/fixtures.js'
import { tampered } from '../helpers/tampered.js'

// OWASP API1 (broken object-level authorization), cell by cell: every operation that takes
// an id × the caller's own job, another organization's, a missing one, a malformed one ×
// a Pro, a free and no credential, and keys restricted to each scope alone and to both
// (issue 24); and the list × no cursor, the caller's own, another organization's, a forged
// and a garbled one × the same callers. A key without the operation's scope gets the same
// 403 insufficient_scope whatever the job, malformed ids included, and before the plan.

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
/** The organization's unrestricted tenant (restricted keys share their user's organization). */
const organizationOf = (tenant: Tenant | undefined): Tenant => [pro, free, outsider].find(o => o.organizationId === tenant?.organizationId) ?? pro

// Restricted keys of the Pro and the free organization's user: `pro/jobs` has jobs:read
// only, `pro/analytics` analytics:read only, `pro/both` both (listed, not `*`).
const restricted = {
  'pro/jobs': await keyWithScopes(prisma, pro, ['jobs:read']),
  'pro/analytics': await keyWithScopes(prisma, pro, ['analytics:read']),
  'pro/both': await keyWithScopes(prisma, pro, ['jobs:read', 'analytics:read']),
  'free/jobs': await keyWithScopes(prisma, free, ['jobs:read']),
  'free/analytics': await keyWithScopes(prisma, free, ['analytics:read']),
}
type Caller = 'pro' | 'free' | 'none' | keyof typeof restricted
type Target = 'own' | 'other' | 'missing' | 'malformed'
const callers: Record<Caller, Tenant | undefined> = { pro, free, none: undefined, ...restricted }
const idFor = (caller: Caller, target: Target): string => {
  const self = callers[caller] ?? pro
  if (target === 'own') return jobs.get(organizationOf(self))!
  if (target === 'other') return jobs.get(outsider)!
  return target === 'missing' ? randomUUID() : 'not-a-uuid'
}
// A status, or a 403 with its code: `scope` insufficient_scope, `plan` upgrade_required.
type Cell = number | 'scope' | 'plan'
const every = (cell: Cell): Record<Target, Cell> => ({ own: cell, other: cell, missing: cell, malformed: cell })
const readable: Record<Target, Cell> = { own: 200, other: 404, missing: 404, malformed: 400 }
const expected: Record<string, Record<Caller, Record<Target, Cell>>> = {
  '/api/jobs/{id}': {
    pro: readable,
    free: readable,
    none: every(401),
    'pro/jobs': readable,
    'pro/analytics': every('scope'),
    'pro/both': readable,
    'free/jobs': readable,
    'free/analytics': every('scope'),
  },
  '/api/jobs/{id}/analytics': {
    pro: readable,
    free: { own: 'plan', other: 'plan', missing: 'plan', malformed: 400 },
    none: every(401),
    'pro/jobs': every('scope'),
    'pro/analytics': readable,
    'pro/both': readable,
    // The scope is decided before the plan: the key learns it lacks the scope, not the upgrade link.
    'free/jobs': every('scope'),
    'free/analytics': { own: 'plan', other: 'plan', missing: 'plan', malformed: 400 },
  },
}
const requiredScope: Record<string, string> = { '/api/jobs/{id}': 'jobs:read', '/api/jobs/{id}/analytics': 'analytics:read', '/api/jobs': 'jobs:read' }

/** Checks a response against its cell; the body without its request id, for comparisons. */
function checkCell (t: Test, res: LightMyRequestResponse, cell: Cell, template: string, name: string): string {
  t.equal(res.statusCode, typeof cell === 'number' ? cell : 403, name)
  if (cell === 'scope') t.match(res.json(), { code: 'insufficient_scope', required_scope: requiredScope[template] }, `${name}: insufficient_scope`)
  if (cell === 'plan') t.match(res.json(), { code: 'upgrade_required', upgrade_url: String }, `${name}: upgrade_required`)
  if (cell === 'scope') t.notOk('upgrade_url' in res.json(), `${name}: no upgrade link`)
  cells++
  return res.body.replace(/"request_id":"[^"]+"/, '')
}

t.test('every cell has its expected status; another organization\'s job is byte-identical to a missing one', async t => {
  for (const [template, byCaller] of Object.entries(expected)) {
    for (const [caller, byTarget] of Object.entries(byCaller) as Array<[Caller, Record<Target, Cell>]>) {
      const headers = callers[caller]?.auth ?? {}
      const bodies: Partial<Record<Target, string>> = {}
      for (const [target, cell] of Object.entries(byTarget) as Array<[Target, Cell]>) {
        const res = await app.inject({ url: template.replace('{id}', idFor(caller, target)), headers })
        bodies[target] = checkCell(t, res, cell, template, `${template} ${caller} ${target}`)
      }
      t.equal(bodies.other, bodies.missing, `${template} ${caller}: other organization's job = missing job`)
      if (byTarget.own === 'scope') {
        t.ok(bodies.own === bodies.other && bodies.own === bodies.malformed, `${template} ${caller}: the same insufficient_scope for an own, a foreign, a missing and a malformed id`)
      }
    }
  }
})

t.test('HEAD is guarded like GET: a key without the scope gets 403 with no body', async t => {
  for (const [url, caller] of [[`/api/jobs/${jobs.get(pro)}`, 'pro/analytics'], [`/api/jobs/${jobs.get(pro)}/analytics`, 'pro/jobs'], ['/api/jobs', 'pro/analytics']] as const) {
    const res = await app.inject({ method: 'HEAD', url, headers: callers[caller]!.auth })
    t.equal(res.statusCode, 403, `HEAD ${url} ${caller}`)
    t.equal(res.body, '', 'no body')
    t.equal((await app.inject({ method: 'HEAD', url, headers: pro.auth })).statusCode, 200, `HEAD ${url} with every scope`)
  }
})

type CursorCase = 'none' | 'own' | 'other' | 'forged' | 'garbled'
const cursorOf = async (tenant: Tenant): Promise<string> => (await app.inject({ url: '/api/jobs?limit=1', headers: tenant.auth })).json().next_cursor as string
// The organization's own cursor, made with its unrestricted key (a key without jobs:read gets none).
const cursors: Record<Caller, Record<CursorCase, string | undefined>> = Object.fromEntries(await Promise.all((Object.entries(callers) as Array<[Caller, Tenant | undefined]>).map(async ([caller, tenant]) => {
  const own = await cursorOf(organizationOf(tenant))
  const other = await cursorOf(outsider)
  const [body, signature] = own.split('.') as [string, string]
  // The caller's cursor rewritten to point into the other organization, its signature kept.
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>
  const forged = `${Buffer.from(JSON.stringify({ ...payload, o: outsider.organizationId })).toString('base64url')}.${signature}`
  return [caller, { none: undefined, own, other, forged, garbled: tampered(own) }]
}))) as Record<Caller, Record<CursorCase, string | undefined>>
const listing: Record<CursorCase, Cell> = { none: 200, own: 200, other: 400, forged: 400, garbled: 400 }
const noListing: Record<CursorCase, Cell> = { none: 'scope', own: 'scope', other: 'scope', forged: 'scope', garbled: 'scope' }
const listExpected: Record<Caller, Record<CursorCase, Cell>> = {
  pro: listing,
  free: listing,
  none: { none: 401, own: 401, other: 401, forged: 401, garbled: 401 },
  'pro/jobs': listing,
  'pro/analytics': noListing,
  'pro/both': listing,
  'free/jobs': listing,
  'free/analytics': noListing,
}

t.test('the list × cursors: only the caller\'s own cursor pages, and never into another organization', async t => {
  let rows = 0
  let foreign = 0
  for (const [caller, byCursor] of Object.entries(listExpected) as Array<[Caller, Record<CursorCase, Cell>]>) {
    const tenant = callers[caller]
    for (const [name, cell] of Object.entries(byCursor) as Array<[CursorCase, Cell]>) {
      const cursor = cursors[caller][name]
      const res = await app.inject({ url: `/api/jobs?limit=1${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, headers: tenant?.auth ?? {} })
      checkCell(t, res, cell, '/api/jobs', `list ${caller} cursor ${name}`)
      if (res.statusCode !== 200) { t.notOk('data' in res.json(), `list ${caller} cursor ${name}: no rows`); continue }
      for (const row of (res.json() as { data: Array<{ id: string }> }).data) {
        rows++
        if (!owned.get(organizationOf(tenant))!.has(row.id)) foreign++
      }
    }
  }
  t.equal(foreign, 0, `0 foreign rows in ${rows} listed`)
  t.comment(`cross-organization matrix: ${cells} cells checked, ${rows} rows listed, ${foreign} foreign`)
})

t.test('no list page ever holds another organization\'s row', async t => {
  for (const tenant of [pro, free, outsider, restricted['pro/jobs'], restricted['free/jobs']]) {
    const mine = owned.get(organizationOf(tenant))!
    let cursor: string | null = null
    do {
      const res = await app.inject({ url: `/api/jobs?limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, headers: tenant.auth })
      const body = res.json() as { data: Array<{ id: string }>, next_cursor: string | null }
      for (const row of body.data) t.ok(mine.has(row.id), 'own row')
      cursor = body.next_cursor
    } while (cursor !== null)
  }
})
