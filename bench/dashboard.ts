// The dashboard's batch against the single-job analytics it replaces (issue 56): the service
// as production runs it (the build, Node 24, a PostgreSQL server, the API's role), autocannon
// in a process of its own, one connection (latency), scenarios interleaved round by round,
// medians of each round's time per request (1 / its throughput). Two organizations: "small", 50 jobs of 200 screens (10,000);
// "large", 50 jobs of 100,000 (5,000,000; loaded with the triggers off, then the summaries
// rebuilt, as an import would be).
//   - a batch of the 50 small jobs ÷ one single-job call (a small job; the 50 taken in turn): at most 3
//   - a batch of the 50 large jobs ÷ a batch of the 50 small ones: at most 1.5
//   - the organization's rollup (GET /api/analytics/organization) of each, and of a "wide" one
//     (--wide-jobs jobs of --wide screens: 1,000 of 1,000 by default) and a "wider" one
//     (--wider-jobs of --wider: 10,000 of 500), ÷ one single-job call (the issue's targets: 5
//     for 1,000 jobs and 1M screens, 10 for 10,000 jobs and 5M)
//   - compare=previous_period (26 weeks of 2025 beside the 26 before) ÷ the same range without it:
//     one large job, the batch and the rollup of the large organization
// In UTC, Europe/Berlin and America/New_York; each on two instances of the service side by side:
// as it runs (answers kept: a question asked again costs its version's read) and with
// ANALYTICS_CACHE_BYTES=0 (every answer computed: what a question costs the first time).
// BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npm run bench:dashboard [-- --rounds 5 --seconds 4 --large 100000 --wide-jobs 1000 --wide 1000 --wider-jobs 10000 --wider 500]
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { createApiKey, createOrganization, createUser } from '../src/admin/commands.js'
import { openServerDatabase } from '../src/db/server-database.js'
import { cleanUp, cleanUpOnSignals } from './cleanup.js'
import { measure } from './load.js'
import { median } from './report.js'
import { buildService, nodeBinary, startService } from './servers.js'
import { createBenchDatabase } from './throwaway-database.js'

const { values } = parseArgs({ options: { rounds: { type: 'string' }, seconds: { type: 'string' }, large: { type: 'string' }, 'wide-jobs': { type: 'string' }, wide: { type: 'string' }, 'wider-jobs': { type: 'string' }, wider: { type: 'string' } } })
const ROUNDS = Number(values.rounds ?? 5)
const SECONDS = Number(values.seconds ?? 4)
const LARGE = Number(values.large ?? 100_000)
const JOBS = 50
const WIDE_JOBS = Number(values['wide-jobs'] ?? 1000)
const WIDE = Number(values.wide ?? 1000)
const WIDER_JOBS = Number(values['wider-jobs'] ?? 10_000)
const WIDER = Number(values.wider ?? 500)
const SMALL = 200
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
if (serverUrl === undefined) { console.error('BENCH_DATABASE_URL is required'); process.exit(2) }

// Two years of completions at any second, the main bench's mix of statuses and scores.
const SCREENS = `
  INSERT INTO screens (job_id, status, score, started_at, completed_at)
  SELECT j.id, s.status,
         CASE WHEN s.status = 'completed' AND (hashint8(g * 8 + 1) & 1023) < 920 THEN ((hashint8(g * 8 + 2) & 1023) % 1001) / 10.0 END,
         s.started, CASE WHEN s.status = 'completed' THEN s.started + interval '20 minutes' END
  FROM jobs j CROSS JOIN generate_series(1, $2::int) g
  CROSS JOIN LATERAL (SELECT (CASE WHEN (hashint8(g * 8) & 1023) < 614 THEN 'completed' WHEN (hashint8(g * 8) & 1023) < 870 THEN 'in_progress' ELSE 'expired' END)::screen_status AS status,
                             timestamptz '2024-11-01 00:00+00' + ((hashint8(g * 8 + 3 + hashtext(j.id::text)) & 2147483647) % (730 * 86400)) * interval '1 second' AS started) s
  WHERE j.organization_id = $1::uuid`

cleanUpOnSignals()
try {
  const node = nodeBinary()
  await buildService()
  const db = await createBenchDatabase(serverUrl)
  const owner = openServerDatabase(db.url, { DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 600_000, DB_STATEMENT_TIMEOUT_MS: 600_000 })
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  const started = Date.now()
  const tenant = async (name: string, screens: number, jobs = JOBS) => {
    const org = await createOrganization(owner.prisma, { name, plan: 'pro', status: 'active', currentPeriodEnd: null })
    const user = await createUser(owner.prisma, { organizationId: org.id, email: `${name}@example.test`, name })
    await client.query(`INSERT INTO jobs (organization_id, user_id, title, company_name, description, slug, share_token)
      SELECT $1::uuid, $2::uuid, 'Job ' || n, 'C', 'D', 'job-' || gen_random_uuid(), md5(n::text || random()) || md5(random()::text)
      FROM generate_series(1, ${jobs}) n`, [org.id, user.id])
    const jobIds = (await client.query<{ id: string }>('SELECT id FROM jobs WHERE organization_id = $1 ORDER BY id', [org.id])).rows.map(r => r.id)
    await client.query('ALTER TABLE screens DISABLE TRIGGER USER')
    try {
      await client.query(SCREENS, [org.id, screens])
    } finally {
      await client.query('ALTER TABLE screens ENABLE TRIGGER USER')
    }
    await client.query('SELECT rebuild_screen_summaries($1::uuid[])', [jobIds])
    return { key: (await createApiKey(owner.prisma, { userId: user.id })).key, jobIds }
  }
  const small = await tenant('small', SMALL)
  const large = await tenant('large', LARGE)
  const wide = await tenant('wide', WIDE, WIDE_JOBS)
  const wider = await tenant('wider', WIDER, WIDER_JOBS)
  await client.query('VACUUM ANALYZE')
  await client.end()
  await owner.close()
  console.log(`loaded ${JOBS * SMALL} + ${JOBS * LARGE} + ${WIDE_JOBS * WIDE} + ${WIDER_JOBS * WIDER} screens in ${((Date.now() - started) / 1000).toFixed(0)} s`)

  // The wider organization's rollup, computed (3M completions read), takes seconds: longer bounds than the defaults' 4 and 5 s.
  const slow = { REQUEST_TIMEOUT_MS: '60000', DB_STATEMENT_TIMEOUT_MS: '60000', DB_QUERY_TIMEOUT_MS: '61000' }
  const services = { kept: await startService(node, db.apiUrl, slow), computed: await startService(node, db.apiUrl, { ...slow, ANALYTICS_CACHE_BYTES: '0' }) }
  const batchPath = (ids: string[], tz: string): string => `/api/analytics/jobs?${ids.map(id => `job_id=${id}`).join('&')}&tz=${tz}`
  const RANGE = 'from=2025-01-06&to=2025-07-06'
  const COMPARED = ['single ranged', 'single compared', 'batch ranged', 'batch compared', 'rollup ranged', 'rollup compared'] as const
  type Name = 'single' | 'batch small' | 'batch large' | 'rollup small' | 'rollup large' | 'rollup wide' | 'rollup wider' | typeof COMPARED[number]
  const zones = ['UTC', 'Europe/Berlin', 'America/New_York']
  const scenarios = (tz: string): Record<Name, { key: string, paths: string[] }> => ({
    single: { key: small.key, paths: small.jobIds.map(id => `/api/jobs/${id}/analytics?tz=${tz}`) },
    'batch small': { key: small.key, paths: [batchPath(small.jobIds, tz)] },
    'batch large': { key: large.key, paths: [batchPath(large.jobIds, tz)] },
    'rollup small': { key: small.key, paths: [`/api/analytics/organization?tz=${tz}`] },
    'rollup large': { key: large.key, paths: [`/api/analytics/organization?tz=${tz}`] },
    'rollup wide': { key: wide.key, paths: [`/api/analytics/organization?tz=${tz}`] },
    'rollup wider': { key: wider.key, paths: [`/api/analytics/organization?tz=${tz}`] },
    'single ranged': { key: large.key, paths: [`/api/jobs/${large.jobIds[0]}/analytics?tz=${tz}&${RANGE}`] },
    'single compared': { key: large.key, paths: [`/api/jobs/${large.jobIds[0]}/analytics?tz=${tz}&${RANGE}&compare=previous_period`] },
    'batch ranged': { key: large.key, paths: [`${batchPath(large.jobIds, tz)}&${RANGE}`] },
    'batch compared': { key: large.key, paths: [`${batchPath(large.jobIds, tz)}&${RANGE}&compare=previous_period`] },
    'rollup ranged': { key: large.key, paths: [`/api/analytics/organization?tz=${tz}&${RANGE}`] },
    'rollup compared': { key: large.key, paths: [`/api/analytics/organization?tz=${tz}&${RANGE}&compare=previous_period`] },
  })
  // Every answer a 200 of the expected size, the same from both instances, before anything is timed.
  for (const tz of zones) {
    for (const [name, { key, paths }] of Object.entries(scenarios(tz))) {
      const [kept, computed] = await Promise.all(Object.values(services).map(async ({ url }) => await fetch(url + paths[0]!, { headers: { authorization: `Bearer ${key}` } }).then(async res => ({ status: res.status, text: await res.text() }))))
      const body = JSON.parse(kept!.text) as { jobs?: unknown[] }
      if (kept!.status !== 200 || (name.startsWith('batch') && body.jobs?.length !== JOBS)) throw new Error(`${name} ${tz}: ${kept!.status} ${kept!.text.slice(0, 300)}`)
      if (computed!.text !== kept!.text) throw new Error(`${name} ${tz}: the two instances differ`)
    }
  }
  const rows: Record<keyof typeof services, string[]> = { kept: [], computed: [] }
  const compareRows: string[] = []
  const summary: string[] = []
  for (const tz of zones) {
    const cases = scenarios(tz)
    const means = { kept: {}, computed: {} } as Record<keyof typeof services, Record<Name, number[]>>
    for (let round = 0; round < ROUNDS; round++) {
      const order = Object.keys(cases) as Name[]
      for (const name of round % 2 === 0 ? order : [...order].reverse()) {
        for (const [instance, { url }] of Object.entries(services) as Array<[keyof typeof services, { url: string }]>) {
          const { key, paths } = cases[name]
          const m = await measure(node, url, paths.map(path => ({ path })), { seconds: SECONDS, connections: 1, headers: { authorization: `Bearer ${key}` } })
          if (m.bad > 0) throw new Error(`${name} ${tz} ${instance}: ${m.bad} bad answers ${JSON.stringify(m.statusCodes)}`)
          // One connection: the time a request takes is 1 / throughput (autocannon keeps whole milliseconds).
          ;(means[instance][name] ??= []).push(1000 / m.requestsPerSecond)
        }
      }
    }
    for (const instance of ['kept', 'computed'] as const) {
      const [single, batchSmall, batchLarge, rollupSmall, rollupLarge, rollupWide, rollupWider] = (['single', 'batch small', 'batch large', 'rollup small', 'rollup large', 'rollup wide', 'rollup wider'] as Name[]).map(name => median(means[instance][name])!)
      const ratio = (x: number): string => `**${(x / single!).toFixed(2)}**`
      rows[instance].push(`| ${tz} | ${single!.toFixed(3)} | ${batchSmall!.toFixed(3)} | ${batchLarge!.toFixed(3)} | ${ratio(batchSmall!)} | **${(batchLarge! / batchSmall!).toFixed(2)}** | ${rollupSmall!.toFixed(3)} | ${rollupLarge!.toFixed(3)} | ${rollupWide!.toFixed(3)} | ${rollupWider!.toFixed(3)} | ${ratio(rollupSmall!)} | ${ratio(rollupLarge!)} | ${ratio(rollupWide!)} | ${ratio(rollupWider!)} |`)
      console.log(instance, rows[instance].at(-1))
      summary.push(`${tz}, answers ${instance}: batch ÷ single ${(batchSmall! / single!).toFixed(2)}, large ÷ small ${(batchLarge! / batchSmall!).toFixed(2)}, rollup ÷ single ${(rollupSmall! / single!).toFixed(2)} (small org), ${(rollupLarge! / single!).toFixed(2)} (large org), ${(rollupWide! / single!).toFixed(2)} (wide org), ${(rollupWider! / single!).toFixed(2)} (wider org)`)
    }
    const [single1, single2, batch1, batch2, rollup1, rollup2] = COMPARED.map(name => median(means.computed[name])!)
    compareRows.push(`| ${tz} | ${single1!.toFixed(3)} | ${single2!.toFixed(3)} | **${(single2! / single1!).toFixed(2)}** | ${batch1!.toFixed(3)} | ${batch2!.toFixed(3)} | **${(batch2! / batch1!).toFixed(2)}** | ${rollup1!.toFixed(3)} | ${rollup2!.toFixed(3)} | **${(rollup2! / rollup1!).toFixed(2)}** |`)
    console.log(compareRows.at(-1))
  }
  await services.kept.child.stop()
  await services.computed.child.stop()
  const stamp = new Date().toISOString().replace(/:/g, '').slice(0, 15).replace('T', '-')
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true })
  writeFileSync(join(import.meta.dirname, 'results', `${stamp}-dashboard.md`), [
    `# Dashboard bench, ${new Date().toISOString()}`,
    '',
    `Node ${node.version}, the service's build on a PostgreSQL server as the API's role; autocannon in its own process, 1 connection, ${SECONDS} s a measurement, ${ROUNDS} rounds interleaved; medians of the rounds' time per request (1 connection: 1 / throughput). Small: ${JOBS} jobs of ${SMALL} screens; large: ${JOBS} jobs of ${LARGE.toLocaleString('en')} (${(JOBS * LARGE).toLocaleString('en')} screens). Targets: batch ÷ single at most 3, large ÷ small at most 1.5; the rollup of the small and the large organization (each of ${JOBS} jobs), the wide one (${WIDE_JOBS.toLocaleString('en')} jobs of ${WIDE.toLocaleString('en')} screens) and the wider one (${WIDER_JOBS.toLocaleString('en')} jobs of ${WIDER.toLocaleString('en')}) against one single-job call (targets: 5 for 1,000 jobs and 1M screens, 10 for 10,000 and 5M).`,
    '',
    'Answers kept (the service as it runs: each question asked again while its figures are unchanged):',
    '',
    '| zone | one job, ms a request | batch of 50 small, ms | batch of 50 large, ms | batch ÷ single | large ÷ small | rollup small org, ms | rollup large org, ms | rollup wide org, ms | rollup wider org, ms | rollup small ÷ single | rollup large ÷ single | rollup wide ÷ single | rollup wider ÷ single |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.kept,
    '',
    'Every answer computed (ANALYTICS_CACHE_BYTES=0: each question as the first time it is asked, or after a write to its jobs):',
    '',
    '| zone | one job, ms a request | batch of 50 small, ms | batch of 50 large, ms | batch ÷ single | large ÷ small | rollup small org, ms | rollup large org, ms | rollup wide org, ms | rollup wider org, ms | rollup small ÷ single | rollup large ÷ single | rollup wide ÷ single | rollup wider ÷ single |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.computed,
    '',
    `compare=previous_period (${RANGE}, 26 weeks, beside the 26 before) against the same range without it, every answer computed, on the large organization (its first job for one job):`,
    '',
    '| zone | one job ranged, ms | compared, ms | ÷ | batch of 50 ranged, ms | compared, ms | ÷ | rollup ranged, ms | compared, ms | ÷ |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...compareRows,
    '',
  ].join('\n'))
  console.log(summary.join('\n'))
  console.log(`wrote bench/results/${stamp}-dashboard.md`)
} finally {
  await cleanUp()
}
