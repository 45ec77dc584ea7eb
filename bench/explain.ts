// npm run bench:explain: the SQL each repository method sends, with PostgreSQL's plan and
// timing, for a job with 100,000 screens in a table of 1,000,000, vacuumed as autovacuum
// would leave it (the visibility map is what makes index-only scans pay).
// Needs a server: TEST_DATABASE_URL=postgresql://…/db (a throwaway database is made beside it).
import { clientReader } from '../src/db/sql-reader.js'
import { jobAnalytics } from '../src/jobs/analytics/read.js'
import { findJob } from '../src/jobs/job/find-job.js'
import { listJobs } from '../src/jobs/list/list.js'
import { createTestDatabase, serverUrl } from '../test/helpers/database.js'
import { createJob, createTenant } from '../test/helpers/fixtures.js'
import { inZone } from '../test/helpers/zones.js'

if (serverUrl === undefined) {
  console.error('Set TEST_DATABASE_URL to a PostgreSQL server database (a throwaway one is created beside it).')
  process.exit(2)
}
const db = await createTestDatabase({ logQueries: true })
const { prisma } = db
try {
  const acme = await createTenant(prisma, { plan: 'pro' })
  const globex = await createTenant(prisma, { plan: 'pro' })
  const big = await createJob(prisma, acme, { questions: 10 })
  const others = [...await Promise.all(Array.from({ length: 200 }, () => createJob(prisma, acme, { questions: 3 }))), ...await Promise.all(Array.from({ length: 250 }, () => createJob(prisma, globex, { questions: 3 })))]
  const fill = async (jobIds: string[], perJob: number) => {
    await prisma.$executeRawUnsafe(`
      INSERT INTO screens (job_id, status, score, started_at, completed_at)
      SELECT j, st, CASE WHEN st = 'completed' AND random() < 0.9 THEN round((random() * 100)::numeric, 1)::float8 END, t - interval '1 hour', CASE WHEN st = 'completed' THEN t END
      FROM unnest($1::uuid[]) AS j, generate_series(1, ${perJob}) AS g,
           LATERAL (SELECT (ARRAY['completed','completed','completed','in_progress','expired'])[1 + (g % 5)]::screen_status AS st,
                           timestamptz '2025-01-01' + (random() * interval '700 days') AS t) x`, jobIds)
  }
  let t0 = Date.now()
  await fill([big.id], 100_000)
  await fill(others.map(j => j.id), 2_000)
  await prisma.$executeRawUnsafe('VACUUM ANALYZE')
  console.log(`data: 1 job with 100,000 screens + 450 jobs with 2,000 each (1,000,000 screens, 2 organizations), ${Date.now() - t0} ms to load and vacuum\n`)

  const captured: Array<{ query: string, params: unknown[] }> = []
  ;(prisma as unknown as { $on: (e: 'query', cb: (e: { query: string, params: string }) => void) => void }).$on('query', e => { captured.push({ query: e.query, params: JSON.parse(e.params) as unknown[] }) })

  const calls: Array<[string, () => Promise<unknown>]> = [
    ['getJob: findJob', () => findJob(clientReader(prisma), acme.organizationId, big.id)],
    ['analytics: UTC, whole history', () => jobAnalytics(clientReader(prisma), acme.organizationId, big.id, inZone('UTC'))],
    ['analytics: Europe/Berlin, 12-week range', () => jobAnalytics(clientReader(prisma), acme.organizationId, big.id, { ...inZone('Europe/Berlin'), weeks: { first: '2025-06-02', last: '2025-08-18' } })],
    ['listJobs: first page of 20', () => listJobs(clientReader(prisma), acme.organizationId, { limit: 20 })],
  ]
  for (const [name, call] of calls) {
    captured.length = 0
    await call()
    const queries = [...captured]
    const times: number[] = []
    for (let i = 0; i < 15; i++) { t0 = performance.now(); await call(); times.push(performance.now() - t0) }
    times.sort((a, b) => a - b)
    console.log(`=== ${name}: ${queries.length} quer${queries.length === 1 ? 'y' : 'ies'}, median ${times[7]!.toFixed(1)} ms over 15 calls (p100 ${times[14]!.toFixed(1)} ms)`)
    for (const { query, params } of queries) {
      console.log(`\n${query}\n  params: ${JSON.stringify(params)}`)
      const plan = await prisma.$queryRawUnsafe<Array<{ 'QUERY PLAN': string }>>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${query}`, ...params)
      console.log(plan.map(r => `  | ${r['QUERY PLAN']}`).join('\n'))
      if (plan.some(r => /Seq Scan on screens/.test(r['QUERY PLAN']))) console.log('  !! sequential scan of screens')
    }
    console.log('')
  }
} finally {
  await db.close()
}
