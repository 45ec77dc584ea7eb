// What a sync costs against a list page (issue 24): an organization with the bench's 2,300
// jobs (20 screens each), a sync token from a full walk, then 10 jobs changed; the sync of
// those 10 and a list page are asked alternately, in process (app.inject: the service's own
// work, no network), and their medians compared. Then (issue 35) what a page costs when much
// changed: an organization whose token was made before MANY (50,000) jobs were created, a sync
// page of 10 against a list page of 10; and a whole sync in pages of 1 over N changes, for
// growing N (its time per page must not grow with N). Run on a server:
//   TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npx tsx bench/sync-cost.ts
// (MANY=…, LINEAR=1000,2000,4000 to change the sizes; ROUNDS=… the rounds of each phase.)
import { performance } from 'node:perf_hooks'
import { buildTestApp } from '../test/helpers/app.js'
import { createTenant } from '../test/helpers/fixtures.js'

const JOBS = 2300
const ROUNDS = Number(process.env.ROUNDS ?? 400)
const MANY = Number(process.env.MANY ?? 50_000)
const LINEAR = (process.env.LINEAR ?? '1000,2000,4000,8000').split(',').map(Number)
const cleanups: Array<() => unknown> = []
const { app, prisma } = await buildTestApp({ teardown: fn => { cleanups.push(fn) } }, { env: { RATE_LIMIT_MAX: '1000000', SYNC_PRUNE_INTERVAL_MS: '0', SUMMARY_FOLD_INTERVAL_MS: '0' } })
try {
  // As the service's timer would, every batch (a call folds the deltas of 1,000 jobs at most).
  const foldAll = async (): Promise<void> => {
    while ((await prisma.$queryRaw<Array<{ moved: number }>>`SELECT fold_screen_summary_deltas(100000) AS moved`)[0]!.moved > 0);
  }
  const acme = await createTenant(prisma)
  const other = await createTenant(prisma)
  for (const tenant of [acme, other]) {
    await prisma.$executeRaw`
      INSERT INTO jobs (organization_id, user_id, title, company_name, description, slug, share_token, created_at, updated_at)
      SELECT ${tenant.organizationId}::uuid, ${tenant.userId}::uuid, 'Job ' || n, 'C', 'D', 'job-' || gen_random_uuid(), md5(n::text || random()) || md5(random()::text), now() - n * interval '1 hour', now()
      FROM generate_series(1, ${JOBS}::int) n`
  }
  await prisma.$executeRaw`
    INSERT INTO screens (job_id, status, score, started_at, completed_at)
    SELECT j.id, 'completed', (random() * 100)::int, now() - interval '30 days', now() - (random() * 20) * interval '1 day'
    FROM jobs j, generate_series(1, 20)`
  await foldAll()
  await prisma.$queryRaw`SELECT prune_job_changes(86400)`
  await prisma.$executeRawUnsafe('VACUUM ANALYZE')
  const ask = async (url: string): Promise<{ ms: number, body: { data: unknown[], deleted_ids: string[], next_cursor: string | null, sync_token: string | null } }> => {
    const started = performance.now()
    const res = await app.inject({ url, headers: acme.auth })
    const ms = performance.now() - started
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
    return { ms, body: res.json() }
  }
  // The partner's walk, then the token.
  let cursor: string | null = null
  let token: string | null = null
  let pages = 0
  do {
    const { body } = await ask(`/api/jobs?limit=100${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    cursor = body.next_cursor
    token = body.sync_token
    pages++
  } while (cursor !== null)
  // Ten jobs change, each in a transaction of its own, and the other organization's 500.
  const changed = await prisma.$queryRaw<Array<{ id: string }>>`SELECT id FROM jobs WHERE organization_id = ${acme.organizationId}::uuid ORDER BY random() LIMIT 10`
  for (const { id } of changed) await prisma.$executeRaw`INSERT INTO screens (job_id, status, started_at) VALUES (${id}::uuid, 'in_progress', now())`
  const noise = await prisma.$queryRaw<Array<{ id: string }>>`SELECT id FROM jobs WHERE organization_id = ${other.organizationId}::uuid LIMIT 500`
  for (const { id } of noise) await prisma.$executeRaw`UPDATE jobs SET title = title || '.' WHERE id = ${id}::uuid`
  const sync = `/api/jobs?limit=20&changed_since=${encodeURIComponent(token!)}`
  const { body: synced } = await ask(sync)
  if (synced.data.length !== 10 || synced.sync_token === null) throw new Error(`the sync answered ${synced.data.length} jobs`)
  const series: Record<string, number[]> = { 'list, first page (20)': [], 'sync, 10 changed (unfolded)': [], 'sync, 10 changed (folded)': [], 'sync, nothing changed': [] }
  const { body: emptyAfter } = await ask(sync)
  const nothing = `/api/jobs?changed_since=${encodeURIComponent(emptyAfter.sync_token!)}`
  for (let phase = 0; phase < 2; phase++) {
    if (phase === 1) await foldAll()
    for (let round = 0; round < ROUNDS; round++) {
      series['list, first page (20)']!.push((await ask('/api/jobs?limit=20')).ms)
      series[phase === 0 ? 'sync, 10 changed (unfolded)' : 'sync, 10 changed (folded)']!.push((await ask(sync)).ms)
      if (phase === 1) series['sync, nothing changed']!.push((await ask(nothing)).ms)
    }
  }
  const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]! }
  const list = median(series['list, first page (20)']!)
  console.log(`${JOBS} jobs (20 screens each) in the organization, walked in ${pages} pages of 100; 10 changed, 500 of another organization changed; ${ROUNDS} rounds per phase, interleaved; Node ${process.version}`)
  console.log('| request | median ms | ÷ list page |\n|---|---:|---:|')
  for (const [name, xs] of Object.entries(series)) console.log(`| ${name} | ${median(xs).toFixed(3)} | ${(median(xs) / list).toFixed(2)} |`)

  // An organization whose jobs were all created after its token: every one changed since.
  const changedSince = async (count: number): Promise<{ tenant: Awaited<ReturnType<typeof createTenant>>, token: string }> => {
    const tenant = await createTenant(prisma)
    const walked = await app.inject({ url: '/api/jobs', headers: tenant.auth })
    const token = walked.json().sync_token as string
    // In transactions of 1,000 jobs, as a busy organization's writers would make them.
    for (let done = 0; done < count; done += 1000) {
      await prisma.$executeRaw`
        INSERT INTO jobs (organization_id, user_id, title, company_name, description, slug, share_token, created_at, updated_at)
        SELECT ${tenant.organizationId}::uuid, ${tenant.userId}::uuid, 'Job ' || n, 'C', 'D', 'job-' || gen_random_uuid(), md5(n::text || random()) || md5(random()::text), now() - n * interval '1 minute', now()
        FROM generate_series(1, ${Math.min(1000, count - done)}::int) n`
    }
    await prisma.$executeRawUnsafe('VACUUM ANALYZE jobs, job_changes')
    return { tenant, token }
  }
  const many = await changedSince(MANY)
  const askAs = async (url: string): Promise<number> => {
    const started = performance.now()
    const res = await app.inject({ url, headers: many.tenant.auth })
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
    return performance.now() - started
  }
  const syncTen = `/api/jobs?limit=10&changed_since=${encodeURIComponent(many.token)}`
  const heavy: Record<string, number[]> = { 'list, first page (10)': [], [`sync, first page (10) of ${MANY} changed`]: [] }
  for (let round = 0; round < Math.max(20, Math.floor(ROUNDS / 2)); round++) {
    heavy['list, first page (10)']!.push(await askAs('/api/jobs?limit=10'))
    heavy[`sync, first page (10) of ${MANY} changed`]!.push(await askAs(syncTen))
  }
  const listTen = median(heavy['list, first page (10)']!)
  console.log(`\nAn organization of ${MANY} jobs, all created after its token (in transactions of 1,000); interleaved rounds`)
  console.log('| request | median ms | ÷ list page |\n|---|---:|---:|')
  for (const [name, xs] of Object.entries(heavy)) console.log(`| ${name} | ${median(xs).toFixed(3)} | ${(median(xs) / listTen).toFixed(2)} |`)

  // A whole sync in pages of 1: linear in the changes when a page costs the same wherever it
  // is. The log's rows it read, from PostgreSQL's statistics of the log's indexes and table
  // (a backend sends its counts at most every second, and when idle after 10 s: read after
  // 11 s of quiet; nothing else reads the log meanwhile).
  const logRowsRead = async (): Promise<number> => {
    await new Promise(resolve => setTimeout(resolve, 11_000))
    const [row] = await prisma.$queryRaw<Array<{ n: bigint }>>`
      SELECT (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relname = 'job_changes')
           + (SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = 'job_changes') AS n`
    return Number(row!.n)
  }
  console.log('\nA whole sync in pages of 1 over N changed jobs (every job of an organization created after its token)')
  console.log('| N | pages | total s | ms per page | log rows read | per page |\n|---:|---:|---:|---:|---:|---:|')
  for (const n of LINEAR) {
    const { tenant, token } = await changedSince(n)
    const readBefore = await logRowsRead()
    let cursor: string | null = null
    let pages = 0
    const started = performance.now()
    do {
      const res: { statusCode: number, body: string, json: () => { next_cursor: string | null } } = await app.inject({ url: `/api/jobs?limit=1&changed_since=${encodeURIComponent(token)}${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, headers: tenant.auth })
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
      cursor = res.json().next_cursor
      pages++
    } while (cursor !== null)
    const ms = performance.now() - started
    const read = await logRowsRead() - readBefore
    console.log(`| ${n} | ${pages} | ${(ms / 1000).toFixed(2)} | ${(ms / pages).toFixed(3)} | ${read} | ${(read / pages).toFixed(1)} |`)
  }
} finally {
  for (const fn of cleanups.reverse()) await fn()
}
