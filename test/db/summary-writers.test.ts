import pg from 'pg'
import t from 'tap'
import { foldScreenStats, verifyScreenStats } from '../../src/admin/screen-stats.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { createTestDatabase } from '../helpers/database.js'
import { sleep } from '../helpers/sleep.js'

// Writers of screens never wait on each other because of the summaries (issue 21): 16
// concurrent writer transactions, each touching screens of two or more jobs in random order
// (insert, update, delete, move), on screens of their own, so that without the summaries
// they would have no row in common. Any lock wait or deadlock is then the summaries' doing.
// Waits are caught three ways: each writer's lock_timeout (a wait past it fails the
// transaction), a sampler of ungranted locks, and pg_stat_database.deadlocks. A fold runs
// throughout, as the API's would. On a server only: the embedded database has one connection.
// The sampler tells apart the waits for a relation's extension by a page (`extend`): any
// appending writer takes that lock for the instant of adding a page, the screens' own inserts
// as well, and it is never part of a deadlock or held to the end of a transaction; they are
// counted and printed, not judged.

const db = await createTestDatabase()
t.teardown(() => db.close())
const { prisma } = db
const WRITERS = 16
const TRANSACTIONS = 40
const JOBS = 6

const random = (n: number): number => Math.floor(Math.random() * n)
const shuffle = <T>(values: T[]): T[] => values.map(v => [Math.random(), v] as const).sort((a, b) => a[0] - b[0]).map(([, v]) => v)

/** Ungranted locks in this database, sampled every few milliseconds until stopped. */
function lockSampler (url: string): { stop: () => Promise<{ samples: number, waiting: number, extending: number, seen: string[] }> } {
  const client = new pg.Client({ connectionString: url })
  const state = { running: true }
  let samples = 0
  let waiting = 0
  let extending = 0
  const seen = new Set<string>()
  const loop = (async () => {
    await client.connect()
    while (state.running) {
      const { rows } = await client.query<{ locktype: string, relation: string | null, mode: string }>(`
        SELECT l.locktype, l.relation::regclass::text AS relation, l.mode FROM pg_locks l
        WHERE NOT l.granted AND l.pid <> pg_backend_pid() AND (l.database IS NULL OR l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))`)
      samples++
      if (rows.some(r => r.locktype !== 'extend')) waiting++
      if (rows.some(r => r.locktype === 'extend')) extending++
      for (const r of rows) if (r.locktype !== 'extend') seen.add(`${r.locktype} ${r.relation ?? ''} ${r.mode}`)
      await sleep(2)
    }
    await client.end()
  })()
  return { stop: async () => { state.running = false; await loop; return { samples, waiting, extending, seen: [...seen] } } }
}

async function deadlocks (client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: string }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()')
  return Number(rows[0]!.n)
}

t.test('the lock sampler sees a real wait (so that zero below means something)', { skip: db.url === undefined ? 'needs a PostgreSQL server (TEST_DATABASE_URL)' : false }, async t => {
  const tenant = await createTenant(prisma)
  const job = await createJob(prisma, tenant)
  const [screen] = await prisma.$queryRaw<Array<{ id: string }>>`INSERT INTO screens (job_id, status) VALUES (${job.id}::uuid, 'in_progress') RETURNING id`
  const a = new pg.Client({ connectionString: db.url })
  const b = new pg.Client({ connectionString: db.url })
  await a.connect()
  await b.connect()
  const sampler = lockSampler(db.url!)
  await a.query('BEGIN')
  await a.query('UPDATE screens SET score = 1 WHERE id = $1', [screen!.id])
  const blocked = b.query('UPDATE screens SET score = 2 WHERE id = $1', [screen!.id])
  await sleep(200)
  await a.query('COMMIT')
  await blocked
  const seen = await sampler.stop()
  await a.end()
  await b.end()
  t.ok(seen.waiting > 0, `a wait on a screen's row was sampled (${seen.waiting} of ${seen.samples}: ${seen.seen.join('; ')})`)
})

t.test('16 writers touching several jobs in random order: no deadlock, no lock wait, summaries exact', { skip: db.url === undefined ? 'needs a PostgreSQL server (TEST_DATABASE_URL)' : false }, async t => {
  const tenant = await createTenant(prisma)
  const jobIds: string[] = []
  for (let i = 0; i < JOBS; i++) jobIds.push((await createJob(prisma, tenant)).id)
  // Each writer's own screens, spread over every job.
  const owned: string[][] = []
  for (let w = 0; w < WRITERS; w++) {
    const rows = await prisma.$queryRaw<Array<{ id: string }>>`
      INSERT INTO screens (job_id, status, score, started_at, completed_at)
      SELECT (${jobIds}::uuid[])[1 + i % ${JOBS}], 'completed', (i * 7.3) % 100, now() - interval '30 days', now() - (i % 200) * interval '1 hour'
      FROM generate_series(1, 24) i RETURNING id`
    owned.push(rows.map(r => r.id))
  }
  await foldScreenStats(prisma)

  const watcher = new pg.Client({ connectionString: db.url })
  await watcher.connect()
  const deadlocksBefore = await deadlocks(watcher)
  const sampler = lockSampler(db.url!)
  const writing = { on: true }
  const folder = (async () => {
    let folded = 0
    while (writing.on) {
      folded += await foldScreenStats(prisma)
      await sleep(10)
    }
    return folded
  })()

  const failures: string[] = []
  let committed = 0
  const writer = async (w: number): Promise<void> => {
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    try {
      for (let i = 0; i < TRANSACTIONS; i++) {
        const mine = owned[w]!
        // Two to four jobs, in random order, one operation on each.
        const jobs = shuffle(jobIds).slice(0, 2 + random(3))
        try {
          await client.query('BEGIN')
          await client.query("SET LOCAL lock_timeout = '100ms'")
          for (const job of jobs) {
            const kind = random(5)
            const target = mine[random(mine.length)]
            if (kind === 0 || target === undefined) {
              await client.query("INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES ($1, 'completed', $2, now() - interval '30 days', now() - $3 * interval '1 minute')", [job, random(1000) / 10, random(20_000)])
            } else if (kind === 1) {
              await client.query('UPDATE screens SET score = $2 WHERE id = $1', [target, random(1000) / 10])
            } else if (kind === 2) {
              await client.query("UPDATE screens SET status = CASE status WHEN 'completed' THEN 'expired'::screen_status ELSE 'completed' END, completed_at = coalesce(completed_at, now()) WHERE id = $1", [target])
            } else if (kind === 3) {
              await client.query('UPDATE screens SET job_id = $2 WHERE id = $1', [target, job])
            } else {
              await client.query('DELETE FROM screens WHERE id = $1', [target])
              mine.splice(mine.indexOf(target), 1)
            }
          }
          await client.query('COMMIT')
          committed++
        } catch (error) {
          failures.push(`${(error as { code?: string }).code ?? ''} ${(error as Error).message}`)
          await client.query('ROLLBACK').catch(() => {})
        }
      }
    } finally {
      await client.end()
    }
  }
  await Promise.all(Array.from({ length: WRITERS }, async (_, w) => { await writer(w) }))
  writing.on = false
  const folded = await folder
  const locks = await sampler.stop()
  // A backend's counters reach pg_stat_database when it exits or within a second.
  await sleep(1500)
  const deadlocked = (await deadlocks(watcher)) - deadlocksBefore
  await watcher.end()

  t.comment(`figures: write transactions: ${committed} committed of ${WRITERS * TRANSACTIONS}, ${failures.length} failed, ${deadlocked} deadlocks, lock waits seen in ${locks.waiting} of ${locks.samples} samples (waits for a page's extension in ${locks.extending}); ${folded} deltas folded meanwhile`)
  t.same(failures, [], 'no transaction failed (a deadlock, or a lock wait past 100 ms)')
  t.equal(deadlocked, 0, 'pg_stat_database counts no deadlock')
  t.equal(locks.waiting, 0, `no ungranted lock sampled, extension of a page aside ${locks.seen.join('; ')}`)
  const clean = { jobs: 0, segments: 0, quarters: 0, malformed: 0, jobIds: [] }
  t.same((await verifyScreenStats(prisma)).drift, clean, 'the summaries equal the screens')
  await foldScreenStats(prisma)
  t.same((await verifyScreenStats(prisma)).drift, clean, 'and once every delta is folded')
})
