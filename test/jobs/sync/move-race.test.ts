import pg from 'pg'
import t, { type Test } from 'tap'
import { foldScreenStats } from '../../../src/admin/screen-stats.js'
import { buildTestApp } from '../../helpers/app.js'
import { createJob, createScreens, createTenant, type Tenant } from '../../helpers/fixtures.js'
import { syncFrom, walkThenSync, type Mirror } from '../../helpers/sync-mirror.js'
import { sleep } from '../../helpers/sleep.js'

// A write to a job while the job moves to another organization (issue 35, part 1), on two
// connections as a writer and an operator would make them, in both orders: the write's
// trigger first and the move committed while the write is open; and the move first, still
// open while the write runs. Each time the partners of both organizations walk between the
// move's commit and the write's, and sync once everything has committed: each mirror must
// equal a fresh walk of its organization (the moved job with the write's effect in the one
// it went to). Questions, screens (through their deltas, folded or not) and the job's own
// fields; TRUNCATE last, as it empties the tables. On a PostgreSQL server only: the
// embedded database has one connection, so nothing overlaps.

const { app, prisma, db } = await buildTestApp(t, { env: { SYNC_PRUNE_INTERVAL_MS: '0', SUMMARY_FOLD_INTERVAL_MS: '0' } })
const skip = db.url === undefined ? 'needs a PostgreSQL server (TEST_DATABASE_URL): the embedded database has one connection' : false
const acme = await createTenant(prisma)
const globex = await createTenant(prisma)

/** Where a mirror differs from a fresh walk: `id: field mirror ≠ walk`, or a job only one has. */
function differences (mirror: Mirror, truth: Mirror): string[] {
  const found: string[] = []
  for (const id of new Set([...mirror.jobs.keys(), ...truth.jobs.keys()])) {
    const [mine, real] = [mirror.jobs.get(id), truth.jobs.get(id)]
    if (mine === undefined || real === undefined) { found.push(`${id}: ${mine === undefined ? 'missing from the mirror' : 'in the mirror only'}`); continue }
    for (const field of Object.keys(real)) {
      if (JSON.stringify(mine[field]) !== JSON.stringify(real[field])) found.push(`${id} (${real.title}): ${field} ${JSON.stringify(mine[field])} ≠ ${JSON.stringify(real[field])}`)
    }
  }
  return found
}

async function connect (): Promise<pg.Client & { pid: number }> {
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
  return Object.assign(client, { pid })
}

/**
 * Runs `statement` on `client` without waiting for it, and says once it has either finished
 * or is waiting for a lock (then `done` finishes when the lock is granted).
 */
async function started (client: pg.Client & { pid: number }, statement: string, values: unknown[] = []): Promise<{ waited: boolean, done: Promise<unknown> }> {
  let finished = false
  const done = client.query(statement, values).finally(() => { finished = true })
  done.catch(() => {})
  for (let i = 0; i < 500; i++) {
    if (finished) return { waited: false, done }
    const state = await prisma.$queryRaw<Array<{ wait: string | null }>>`SELECT wait_event_type AS wait FROM pg_stat_activity WHERE pid = ${client.pid}::int`
    if (state[0]?.wait === 'Lock') return { waited: true, done }
    await sleep(10)
  }
  throw new Error(`${statement}: neither finished nor waiting for a lock after 5 s`)
}

/** A write: its statements, in one transaction; the last is the one that may wait for the move. */
interface Write { name: string, sql: string | string[], fold?: boolean }
const WRITES: Write[] = [
  { name: 'a question inserted', sql: 'INSERT INTO questions (job_id, position, text) VALUES ($1, 100, \'added during the move\')' },
  { name: 'a question deleted', sql: 'DELETE FROM questions WHERE id = (SELECT id FROM questions WHERE job_id = $1 ORDER BY position LIMIT 1)' },
  { name: 'a screen inserted (its delta unfolded at the sync)', sql: 'INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES ($1, \'completed\', 77, now(), now())' },
  { name: 'a screen inserted (its delta folded before the sync)', sql: 'INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES ($1, \'completed\', 77, now(), now())', fold: true },
  { name: 'the job\'s title', sql: 'UPDATE jobs SET title = \'retitled during the move\', updated_at = now() WHERE id = $1' },
  // A load with the triggers off, then the rebuild that repairs the summaries: the rebuild
  // logs the jobs whose figures it changed.
  {
    name: 'a rebuild after screens written with the triggers off',
    sql: ['SET LOCAL session_replication_role = replica', 'INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES ($1, \'completed\', 90, now(), now())',
      'SET LOCAL session_replication_role = origin', 'SELECT rebuild_screen_summaries(ARRAY[$1::uuid])'],
  },
  // The rebuild deletes the transaction's own delta: logged by the deltas' trigger, locked.
  { name: 'a screen inserted, then its job rebuilt in the same transaction', sql: ['INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES ($1, \'completed\', 60, now(), now())', 'SELECT rebuild_screen_summaries(ARRAY[$1::uuid])'] },
]

/** One race: `job` moves from `from` to `to` while `write` changes it, in `order`. */
const params = (sql: string, jobId: string): unknown[] => sql.includes('$1') ? [jobId] : []
const statements = (write: Write): string[] => typeof write.sql === 'string' ? [write.sql] : write.sql

async function race (t: Test, write: Write, order: 'write first' | 'move first', from: Tenant, to: Tenant): Promise<void> {
  const job = await createJob(prisma, from, { title: `${write.name}, ${order}`, questions: 3 })
  await createScreens(prisma, job.id, [{ status: 'completed', score: 50, completedAt: new Date('2026-01-05T10:00:00Z') }])
  await foldScreenStats(prisma)
  const mirrors = { from: await walkThenSync(app, from.auth), to: await walkThenSync(app, to.auth) }
  const writer = await connect()
  const mover = await connect()
  t.teardown(async () => { await writer.end(); await mover.end() })
  const move = 'UPDATE jobs SET organization_id = $2, user_id = $3 WHERE id = $1'
  const moveValues = [job.id, to.organizationId, to.userId]
  await writer.query('BEGIN')
  if (order === 'write first') {
    for (const sql of statements(write)) await writer.query(sql, params(sql, job.id))
    const moving = await started(mover, move, moveValues)
    t.comment(`${write.name}, write first: the move ${moving.waited ? 'waited for the write' : 'committed while the write was open'}`)
    // The partners walk while the write is open (and the move committed, unless it waits).
    mirrors.to = await walkThenSync(app, to.auth)
    mirrors.from = await walkThenSync(app, from.auth)
    await writer.query('COMMIT')
    await moving.done
  } else {
    await mover.query('BEGIN')
    await mover.query(move, moveValues)
    const [last, ...first] = statements(write).reverse()
    for (const sql of first.reverse()) await writer.query(sql, params(sql, job.id))
    const writing = await started(writer, last!, params(last!, job.id))
    t.comment(`${write.name}, move first: the write ${writing.waited ? 'waited for the move' : 'ran while the move was open'}`)
    await mover.query('COMMIT')
    await writing.done
    mirrors.to = await walkThenSync(app, to.auth)
    mirrors.from = await walkThenSync(app, from.auth)
    await writer.query('COMMIT')
  }
  if (write.fold === true) await foldScreenStats(prisma)
  await syncFrom(app, to.auth, mirrors.to)
  await syncFrom(app, from.auth, mirrors.from)
  const truth = { to: await walkThenSync(app, to.auth), from: await walkThenSync(app, from.auth) }
  t.ok(truth.to.jobs.has(job.id) && !truth.from.jobs.has(job.id), 'the job moved')
  t.same(differences(mirrors.to, truth.to), [], 'the mirror of the organization the job moved to equals a fresh walk')
  t.same(differences(mirrors.from, truth.from), [], 'the mirror of the organization it left equals a fresh walk')
}

for (const write of WRITES) {
  for (const order of ['write first', 'move first'] as const) {
    t.test(`${write.name} while the job moves, ${order}: both organizations' mirrors have it`, { skip }, async t => {
      await race(t, write, order, acme, globex)
      // And back: the organization that received the job in the first race loses it now.
      await race(t, write, order, globex, acme)
    })
  }
}

// Last: a TRUNCATE empties the table for every test after it.
for (const order of ['write first', 'move first'] as const) {
  t.test(`TRUNCATE of screens while a job moves, ${order}: both mirrors have it`, { skip }, async t => {
    await race(t, { name: 'TRUNCATE screens', sql: 'TRUNCATE screens' }, order, acme, globex)
  })
}
