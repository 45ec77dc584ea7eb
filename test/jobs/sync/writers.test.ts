import t from 'tap'
import { buildTestApp } from '../../helpers/app.js'
import { createJob, createScreens, createTenant } from '../../helpers/fixtures.js'
import { connectSession, waitsForALock, type Session } from '../../helpers/sessions.js'
import { syncFrom, walkThenSync } from '../../helpers/sync-mirror.js'
import { sleep } from '../../helpers/sleep.js'

// What sync costs the recruiters' app, which writes jobs, questions and screens in its own
// transactions on its own connections and retries nothing (issue 40): the shapes it uses
// neither deadlock nor wait on each other because of the change log. On a PostgreSQL server
// only (the embedded database has one connection, so nothing overlaps).

const { app, prisma, db } = await buildTestApp(t, { env: { SYNC_PRUNE_INTERVAL_MS: '0' } })
const skip = db.url === undefined ? 'needs a PostgreSQL server (TEST_DATABASE_URL): the embedded database has one connection' : false
const acme = await createTenant(prisma)
const globex = await createTenant(prisma)

const connect = async (t: { teardown: (fn: () => unknown) => void }): Promise<Session> => await connectSession(t, db.url!)

const insertQuestion = 'INSERT INTO questions (job_id, position, text) VALUES ($1, $2, \'added\')'
const retitle = 'UPDATE jobs SET title = $2, updated_at = now() WHERE id = $1'
let position = 1000
const nextPosition = (): number => ++position

t.test('two interleaved form saves (a question, then the job row) both commit, 5 rounds out of 5', { skip }, async t => {
  const job = await createJob(prisma, acme, { title: 'form', questions: 2 })
  const first = await connect(t)
  const second = await connect(t)
  const failures: string[] = []
  for (let round = 1; round <= 5; round++) {
    await first.query('BEGIN')
    await second.query('BEGIN')
    await first.query(insertQuestion, [job.id, nextPosition()])
    await second.query(insertQuestion, [job.id, nextPosition()])
    const save = async (name: string, session: Session): Promise<void> => {
      try {
        await session.query(retitle, [job.id, `${name} ${round}`])
        await session.query('COMMIT')
      } catch (error) {
        failures.push(`round ${round}, ${name}: ${(error as { code?: string }).code} ${(error as Error).message}`)
        await session.query('ROLLBACK')
      }
    }
    await Promise.all([save('first', first), save('second', second)])
  }
  t.same(failures, [], 'neither save was aborted')
  const row = await prisma.job.findUniqueOrThrow({ where: { id: job.id } })
  t.match(row.title, /^(first|second) 5$/, 'the last round\'s title was kept')
  t.equal(await prisma.question.count({ where: { jobId: job.id } }), 12, 'every round\'s two questions were kept')
})

// Each write left open on one connection while the other runs on a second one, with a lock
// timeout of 100 ms: a wait for a lock fails the statement.
const OPEN_WRITES: Array<{ name: string, sql: string, values: (jobId: string) => unknown[] }> = [
  { name: 'a question inserted', sql: insertQuestion, values: jobId => [jobId, nextPosition()] },
  { name: 'a question updated', sql: 'UPDATE questions SET text = \'edited\' WHERE id = (SELECT id FROM questions WHERE job_id = $1 ORDER BY position LIMIT 1)', values: jobId => [jobId] },
  { name: 'a question deleted', sql: 'DELETE FROM questions WHERE id = (SELECT id FROM questions WHERE job_id = $1 ORDER BY position DESC LIMIT 1)', values: jobId => [jobId] },
  { name: 'a screen inserted', sql: 'INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES ($1, \'completed\', 70, now(), now())', values: jobId => [jobId] },
]
const JOB_WRITES: Array<{ name: string, sql: string, values: (jobId: string) => unknown[] }> = [
  { name: 'a job update', sql: retitle, values: jobId => [jobId, 'retitled'] },
  { name: 'a move', sql: 'UPDATE jobs SET organization_id = $2, user_id = $3 WHERE id = $1', values: jobId => [jobId, globex.organizationId, globex.userId] },
]

for (const open of OPEN_WRITES) {
  for (const write of JOB_WRITES) {
    t.test(`${write.name} beside an open transaction with ${open.name}, and the other way round: neither waits`, { skip }, async t => {
      for (const order of ['the job first', 'the job second'] as const) {
        const job = await createJob(prisma, acme, { title: `${write.name}, ${open.name}`, questions: 3 })
        const holder = await connect(t)
        const other = await connect(t)
        await other.query('SET lock_timeout = \'100ms\'')
        await holder.query('BEGIN')
        const [held, then] = order === 'the job first' ? [write, open] : [open, write]
        await holder.query(held.sql, held.values(job.id))
        const running = other.query(then.sql, then.values(job.id))
        t.notOk(await waitsForALock(prisma, other, running), `${order}: ${then.name} does not wait for a lock`)
        await t.resolves(running, `${order}: ${then.name} beside the open ${held.name} finished (lock_timeout 100 ms)`)
        await holder.query('COMMIT')
      }
    })
  }
}

// The recruiters' app at work: 16 writers mixing form saves, question writes, job updates,
// moves between two organizations and screen writes over a few jobs, each its own
// transaction. None may be aborted (a deadlock, 40P01); afterwards both organizations'
// partners, who walked before and sync now, have what a fresh walk has.
t.test('16 writers mixing question writes, job updates and moves: 0 deadlocks, and both mirrors exact', { skip }, async t => {
  const jobs = await Promise.all(Array.from({ length: 4 }, async (_, i) => await createJob(prisma, acme, { title: `busy ${i}`, questions: 3 })))
  for (const job of jobs) await createScreens(prisma, job.id, [{ status: 'completed', score: 50, completedAt: new Date('2026-01-05T10:00:00Z') }])
  const mirrors = { acme: await walkThenSync(app, acme.auth), globex: await walkThenSync(app, globex.auth) }
  const tenants = [acme, globex]
  const shapes: Record<string, (c: Session, jobId: string, n: number) => Promise<unknown>> = {
    'form save': async (c, jobId, n) => { await c.query(insertQuestion, [jobId, nextPosition()]); await c.query(retitle, [jobId, `saved ${n}`]) },
    'question insert': async (c, jobId) => await c.query(insertQuestion, [jobId, nextPosition()]),
    'question edit, then the job': async (c, jobId, n) => {
      await c.query('UPDATE questions SET text = $2 WHERE id = (SELECT id FROM questions WHERE job_id = $1 ORDER BY random() LIMIT 1)', [jobId, `edit ${n}`])
      await c.query(retitle, [jobId, `edited ${n}`])
    },
    'question delete': async (c, jobId) => await c.query('DELETE FROM questions WHERE id = (SELECT id FROM questions WHERE job_id = $1 ORDER BY random() LIMIT 1)', [jobId]),
    'job update': async (c, jobId, n) => await c.query(retitle, [jobId, `updated ${n}`]),
    move: async (c, jobId, n) => { const to = tenants[n % 2]!; await c.query('UPDATE jobs SET organization_id = $2, user_id = $3 WHERE id = $1', [jobId, to.organizationId, to.userId]) },
    'screen insert, then the job': async (c, jobId, n) => {
      await c.query('INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES ($1, \'completed\', $2, now(), now())', [jobId, n % 101])
      await c.query(retitle, [jobId, `screened ${n}`])
    },
  }
  const names = Object.keys(shapes)
  const counts = { committed: 0, deadlocks: 0, other: [] as string[] }
  let n = 0
  await Promise.all(Array.from({ length: 16 }, async (_, w) => {
    const c = await connect(t)
    for (let i = 0; i < 40; i++) {
      const shape = names[(w + i) % names.length]!
      const job = jobs[(w * 7 + i * 3) % jobs.length]!
      try {
        await c.query('BEGIN')
        await shapes[shape]!(c, job.id, ++n)
        if (i % 3 === 0) await sleep(2) // the transaction held open a moment
        await c.query('COMMIT')
        counts.committed++
      } catch (error) {
        await c.query('ROLLBACK')
        if ((error as { code?: string }).code === '40P01') counts.deadlocks++
        else counts.other.push(`${shape}: ${(error as Error).message}`)
      }
    }
  }))
  t.comment(`writers' figures: ${counts.committed} transactions committed, ${counts.deadlocks} deadlocks, ${counts.other.length} other errors`)
  t.equal(counts.deadlocks, 0, 'no transaction was aborted as a deadlock')
  t.same(counts.other, [], 'nor for any other reason')
  t.equal(counts.committed, 16 * 40, 'every transaction committed')
  for (const name of ['acme', 'globex'] as const) {
    await syncFrom(app, (name === 'acme' ? acme : globex).auth, mirrors[name])
    const truth = await walkThenSync(app, (name === 'acme' ? acme : globex).auth)
    t.same([...mirrors[name].jobs.entries()].sort(), [...truth.jobs.entries()].sort(), `${name}'s mirror equals a fresh walk`)
  }
})
