import t from 'tap'
import { buildApp } from '../../src/app.js'
import { apiDatabase, buildTestApp } from '../helpers/app.js'
import { createJob, createTenant } from '../helpers/fixtures.js'

// Two instances of the service on one database, as behind a load balancer: each its own
// app, pools, caller cache and cursor codec. A walk through the list that alternates
// between them must be the walk one instance gives; with different secrets it cannot be,
// which is why CURSOR_SECRET is required with DATABASE_URL.

const SECRET = 'two-instances-shared-cursor-secret-0123456789'
const env = { CURSOR_SECRET: SECRET, RATE_LIMIT_MAX: '1000000' }
const { app: first, prisma, db, config } = await buildTestApp(t, { env })
const second = await buildApp({ config, database: apiDatabase(db, config) })
t.teardown(async () => { await second.close() })
await second.ready()

const tenant = await createTenant(prisma)
for (let i = 0; i < 7; i++) await createJob(prisma, tenant, { title: `Job ${i}`, createdAt: new Date(Date.UTC(2026, 0, 1 + (i % 3))) })

type App = typeof first
async function walk (instances: App[]): Promise<{ ids: string[], statuses: number[] }> {
  const ids: string[] = []
  const statuses: number[] = []
  let cursor: string | null = null
  for (let page = 0; page < 20; page++) {
    const instance = instances[page % instances.length]!
    const res = await instance.inject({ url: `/api/jobs?limit=2${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, headers: tenant.auth })
    statuses.push(res.statusCode)
    if (res.statusCode !== 200) break
    const body = res.json() as { data: Array<{ id: string }>, next_cursor: string | null }
    ids.push(...body.data.map(j => j.id))
    cursor = body.next_cursor
    if (cursor === null) break
  }
  return { ids, statuses }
}

t.test('a cursor made by one instance is accepted by the other', async t => {
  const alone = await walk([first])
  t.equal(alone.ids.length, 7, 'one instance: every job')
  const alternating = await walk([first, second])
  t.same(alternating.statuses, [200, 200, 200, 200], 'four pages of 2, every other one from the second instance')
  t.same(alternating.ids, alone.ids, 'the same jobs in the same order')
  t.same(await walk([second, first]), alone, 'starting on the second instance too')
  t.comment(`figures: two instances, ${alternating.statuses.length} pages alternating between them, ${alternating.ids.length} jobs, all 200`)
})

t.test('instances with different secrets refuse each other\'s cursors: why the secret is required', async t => {
  const other = await buildApp({ config: { ...config, CURSOR_SECRET: `${SECRET}-but-another` }, database: apiDatabase(db, config) })
  t.teardown(async () => { await other.close() })
  const mixed = await walk([first, other])
  t.same(mixed.statuses, [200, 400], 'the second page, on the instance with another secret, is a 400')
})
