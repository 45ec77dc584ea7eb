import pg from 'pg'
import t from 'tap'
import { buildTestApp } from '../../helpers/app.js'
import { createJob, createScreens, createTenant, keyWithScopes, type Tenant } from '../../helpers/fixtures.js'
import { checkProperty } from '../../helpers/property.js'
import { apply, scenario } from '../../helpers/random-writes.js'
import { syncFrom, walkThenSync, type Mirror } from '../../helpers/sync-mirror.js'
import { sleep } from '../../helpers/sleep.js'

// No change is ever missed (issue 24): a partner of each of two organizations walks its jobs
// while writers change them, then syncs again and again, fetching the analytics of every job
// a sync names (and a third, of a key that cannot read analytics, whose syncs skip the changes
// of analytics alone, issue 35); writers insert, update, move and delete screens, edit, create, move (between
// the two organizations, issue 35) and delete jobs and edit questions, in concurrent
// transactions that commit in random order, some held open across the partners' requests.
// After the writers stop and one last sync, each mirror must equal a fresh walk of its
// organization, and each mirrored job's analytics the job's analytics now. On a PostgreSQL
// server only: the embedded database has one connection, so nothing overlaps.

const { app, prisma, db } = await buildTestApp(t, { env: { RATE_LIMIT_MAX: '1000000', SYNC_PRUNE_INTERVAL_MS: '0' } })
const skip = db.url === undefined ? 'needs a PostgreSQL server (TEST_DATABASE_URL): the embedded database has one connection' : false

/**
 * A mirror that also keeps each mirrored job's analytics, fetched when a sync names the job
 * (not by a partner whose key cannot read them: `analytics` stays empty).
 */
interface Partner { name: string, tenant: Tenant, mirror: Mirror, analytics: Map<string, unknown>, readsAnalytics: boolean }

async function fetchAnalytics (tenant: Tenant, partner: Pick<Partner, 'analytics' | 'readsAnalytics'>, ids: Iterable<string>): Promise<void> {
  if (!partner.readsAnalytics) return
  for (const id of ids) {
    const res = await app.inject({ url: `/api/jobs/${id}/analytics`, headers: tenant.auth })
    if (res.statusCode === 200) partner.analytics.set(id, res.json())
    else if (res.statusCode === 404) partner.analytics.delete(id) // gone since the sync's page: the next sync says so
    else throw new Error(`analytics ${res.statusCode} ${res.body}`)
  }
}

t.test('the mirrors of both organizations, kept by syncs, equal the database after concurrent writers that move jobs between them', { skip }, async t => {
  const pool = new pg.Pool({ connectionString: db.url, max: 4 })
  t.teardown(async () => { await pool.end() })
  let cases = 0
  await checkProperty(t, 'sync mirror', scenario, async ({ jobs: count, writers, pageSize }) => {
    cases++
    const home = await createTenant(prisma)
    const away = await createTenant(prisma)
    const ids: string[] = []
    for (let i = 0; i < count; i++) {
      const job = await createJob(prisma, home, { questions: i % 3 })
      ids.push(job.id)
      if (i % 2 === 0) await createScreens(prisma, job.id, [{ status: 'completed', score: 40 + i, completedAt: new Date('2026-01-07T10:00:00Z') }])
    }
    const state = { running: true }
    const writing = Promise.all(writers.map(async transactions => {
      for (const { ops, holdMs } of transactions) {
        const client = await pool.connect()
        try {
          await client.query('BEGIN')
          for (const o of ops) await apply(client, o, ids, home, away)
          await sleep(holdMs)
          await client.query('COMMIT')
        } catch (error) {
          await client.query('ROLLBACK')
          // Two writers on one row may deadlock or conflict: the screens' own doing, retried by nobody.
          if (!['40P01', '40001', '23505', '23503'].includes((error as { code?: string }).code ?? '')) throw error
        } finally {
          client.release()
        }
      }
    })).finally(() => { state.running = false })

    // A partner of each organization, and one of the home organization whose key cannot read
    // analytics (its syncs skip the changes of analytics alone): a walk while the writers
    // write (jobs move between the two organizations), then syncs until they stop, then one
    // more.
    const partners: Partner[] = []
    for (const [name, tenant, readsAnalytics] of [['home', home, true], ['away', away, true], ['home, jobs:read only', await keyWithScopes(prisma, home, ['jobs:read']), false]] as const) {
      const partner: Partner = { name, tenant, mirror: await walkThenSync(app, tenant.auth, { limit: pageSize }), analytics: new Map(), readsAnalytics }
      await fetchAnalytics(tenant, partner, partner.mirror.jobs.keys())
      partners.push(partner)
    }
    const sync = async (partner: Partner): Promise<void> => {
      const { reported, deleted } = await syncFrom(app, partner.tenant.auth, partner.mirror, { limit: pageSize })
      for (const id of deleted) partner.analytics.delete(id)
      await fetchAnalytics(partner.tenant, partner, reported)
    }
    while (state.running) {
      for (const partner of partners) await sync(partner)
      await sleep(1)
    }
    await writing
    for (const partner of partners) await sync(partner)

    const sorted = (m: Map<string, unknown>): unknown[] => [...m.entries()].sort(([a], [b]) => a < b ? -1 : 1)
    for (const partner of partners) {
      const truth = await walkThenSync(app, partner.tenant.auth)
      if (JSON.stringify(sorted(partner.mirror.jobs)) !== JSON.stringify(sorted(truth.jobs))) {
        throw new Error(`${partner.name}: the mirror differs:\n  mirror ${JSON.stringify(sorted(partner.mirror.jobs))}\n  truth  ${JSON.stringify(sorted(truth.jobs))}`)
      }
      const now = { analytics: new Map<string, unknown>(), readsAnalytics: partner.readsAnalytics }
      await fetchAnalytics(partner.tenant, now, truth.jobs.keys())
      if (JSON.stringify(sorted(partner.analytics)) !== JSON.stringify(sorted(now.analytics))) {
        throw new Error(`${partner.name}: the mirrored analytics differ:\n  mirror ${JSON.stringify(sorted(partner.analytics))}\n  truth  ${JSON.stringify(sorted(now.analytics))}`)
      }
    }
  }, 100)
  t.ok(cases >= 200, `${cases} cases`)
})
