import t from 'tap'
import { buildTestApp } from '../../helpers/app.js'
import { createJob, createScreens, createTenant } from '../../helpers/fixtures.js'
import { connectSession, waitsForALock, type Session } from '../../helpers/sessions.js'

// The lock matrix of docs/sync-design.md, measured (issue 40): for every ordered pair of
// writes to one job, the first left open on one connection, does the second wait for a lock?
// Measured twice, with the change log's triggers and with them disabled (what the writes cost
// before sync): the two matrices must be equal, so sync adds no wait to any pair, and so no
// deadlock either (a deadlock is a cycle of waits). On a PostgreSQL server only.

const { prisma, db } = await buildTestApp(t, { env: { SYNC_PRUNE_INTERVAL_MS: '0', SUMMARY_FOLD_INTERVAL_MS: '0' } })
const skip = db.url === undefined ? 'needs a PostgreSQL server (TEST_DATABASE_URL): the embedded database has one connection' : false
const acme = await createTenant(prisma)
const globex = await createTenant(prisma)

// Sync's own triggers (the summaries' deltas triggers stay: they are issue 21's, not sync's).
const SYNC_TRIGGERS: Record<string, string[]> = {
  jobs: ['jobs_log_changes_insert', 'jobs_log_changes_update', 'jobs_log_changes_delete', 'jobs_truncate_expire_sync_tokens'],
  questions: ['questions_log_changes_insert', 'questions_log_changes_update', 'questions_log_changes_delete', 'questions_log_truncate'],
  screens: ['screens_log_truncate'],
  screen_summary_deltas: ['screen_summary_deltas_log_changes'],
}

// Each write as its statements, on job $1 (of acme; $2, $3: globex and its user, for a move).
// verify-stats --fix: the statements of its repair (src/admin/screen-stats.ts), for one job.
const WRITES: Record<string, string[]> = {
  'job field': ['UPDATE jobs SET title = \'edited\', updated_at = now() WHERE id = $1'],
  'job move': ['UPDATE jobs SET organization_id = $2, user_id = $3 WHERE id = $1'],
  'question insert': ['INSERT INTO questions (job_id, position, text) VALUES ($1, (SELECT coalesce(max(position), 0) + 1 + (random() * 1000000)::int FROM questions WHERE job_id = $1), \'new\')'],
  'question edit': ['UPDATE questions SET text = \'edited\' WHERE job_id = $1'],
  'question delete': ['DELETE FROM questions WHERE job_id = $1'],
  'screen insert': ['INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES ($1, \'completed\', 80, now(), now())'],
  'screen update': ['UPDATE screens SET score = 81 WHERE job_id = $1'],
  'job delete': ['DELETE FROM jobs WHERE id = $1'],
  'TRUNCATE screens': ['TRUNCATE screens'],
  'TRUNCATE questions': ['TRUNCATE questions'],
  rebuild: ['SELECT rebuild_screen_summaries(ARRAY[$1::uuid])'],
  'verify-stats --fix': [
    'SELECT pg_advisory_xact_lock(8146720561340517)',
    `INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
       SELECT job_id, bucket, in_progress, completed, expired, scored, score_sum, summaries_clock() FROM screen_summary_corrections(ARRAY[$1::uuid])`,
    'SELECT log_job_changes_later(ARRAY[$1::uuid], true)',
  ],
}
const NAMES = Object.keys(WRITES)
const connect = async (t: { teardown: (fn: () => unknown) => void }): Promise<Session> => await connectSession(t, db.url!)

async function run (session: Session, name: string, jobId: string): Promise<void> {
  for (const sql of WRITES[name]!) {
    const count = (sql.match(/\$\d/g) ?? []).reduce((max, p) => Math.max(max, Number(p.slice(1))), 0)
    await session.query(sql, [jobId, globex.organizationId, globex.userId].slice(0, count))
  }
}

/** Whether `second` waits for a lock while `first` is open on the same job. */
async function waits (first: Session, second: Session, a: string, b: string): Promise<boolean> {
  const job = await createJob(prisma, acme, { title: `${a} / ${b}`, questions: 2 })
  await createScreens(prisma, job.id, [{ status: 'completed', score: 60, completedAt: new Date('2026-03-02T10:00:00Z') }])
  await first.query('BEGIN')
  await run(first, a, job.id)
  const doing = (async () => { await second.query('BEGIN'); await run(second, b, job.id); await second.query('COMMIT') })()
    .catch(async () => { await second.query('ROLLBACK') })
  const waited = await waitsForALock(prisma, second, doing)
  await first.query('COMMIT')
  await doing
  return waited
}

async function matrix (t: { teardown: (fn: () => unknown) => void }): Promise<Record<string, string[]>> {
  const first = await connect(t)
  const second = await connect(t)
  const waiting: Record<string, string[]> = {}
  for (const a of NAMES) {
    waiting[a] = []
    for (const b of NAMES) if (await waits(first, second, a, b)) waiting[a].push(b)
  }
  return waiting
}

async function syncTriggers (enable: boolean): Promise<void> {
  for (const [table, triggers] of Object.entries(SYNC_TRIGGERS)) {
    for (const trigger of triggers) await prisma.$executeRawUnsafe(`ALTER TABLE ${table} ${enable ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`)
  }
}

const table = (waiting: Record<string, string[]>): string => [
  `| open ↓, then → | ${NAMES.join(' | ')} |`,
  `|---|${NAMES.map(() => ':-:').join('|')}|`,
  ...NAMES.map(a => `| ${a} | ${NAMES.map(b => waiting[a]!.includes(b) ? 'waits' : '·').join(' | ')} |`),
].join('\n')

t.test('sync adds no lock wait to any pair of writes (and so no deadlock): the matrix equals the one without its triggers', { skip }, async t => {
  const withSync = await matrix(t)
  await syncTriggers(false)
  t.teardown(async () => { await syncTriggers(true) })
  const withoutSync = await matrix(t)
  await syncTriggers(true)
  t.comment(`lock matrix with sync:\n${table(withSync)}`)
  t.same(withSync, withoutSync, 'each write waits for the same others as without sync\'s triggers')
  t.same(withSync['job field'], ['job field', 'job move', 'job delete'], 'a job update waits for the job\'s own row writers only')
  t.same(withSync['question insert'], ['job delete', 'TRUNCATE questions'], 'an open question insert holds up only what its foreign key check does (a job deletion)')
})
