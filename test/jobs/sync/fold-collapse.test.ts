import pg from 'pg'
import t from 'tap'
import { buildTestApp } from '../../helpers/app.js'
import { createJob, createTenant } from '../../helpers/fixtures.js'
import { foldScreenStats } from '../../../src/admin/screen-stats.js'
import { walkThenSync, syncFrom } from '../../helpers/sync-mirror.js'
import { untilFinished } from '../../helpers/until-finished.js'

// The fold logs a job's finished screen writes as one collapsed row (migration
// 20261127200000): fewer rows of the log for the writers' cores to pay, and every change still
// reported to each token that had not seen it. This app never folds by itself: the test does.
const { app, prisma, db } = await buildTestApp(t, { env: { SUMMARY_FOLD_INTERVAL_MS: '0', SYNC_PRUNE_INTERVAL_MS: '0' } })
const acme = await createTenant(prisma)

/** One screen inserted in a transaction of its own; that transaction's id. */
const write = async (jobId: string): Promise<string> => (await prisma.$queryRaw<Array<{ xid: string }>>`
  INSERT INTO screens (job_id, status, score, started_at, completed_at)
  VALUES (${jobId}::uuid, 'completed', 71.5, now() - interval '1 hour', now())
  RETURNING pg_current_xact_id()::text AS xid`)[0]!.xid
/** The log's rows of `jobId` for these transactions (the fold writes them), in order. */
const logged = async (jobId: string, xids: string[]) => await prisma.$queryRaw<Array<{ xid: string, collapsed: boolean }>>`
  SELECT xid::text AS xid, collapsed FROM job_changes WHERE job_id = ${jobId}::uuid AND xid::text = ANY (${xids}::text[]) ORDER BY xid::text::bigint`

t.test('finished writes fold into one collapsed row, at the latest; a token taken between them still gets the job', async t => {
  const job = await createJob(prisma, acme, { title: 'busy' })
  const beforeAll = await walkThenSync(app, acme.auth)
  const xids = [await write(job.id), await write(job.id)]
  const between = await walkThenSync(app, acme.auth)
  for (let i = 0; i < 3; i++) xids.push(await write(job.id))
  await untilFinished(prisma, xids)
  await foldScreenStats(prisma)

  const latest = xids.map(BigInt).reduce((a, b) => (a > b ? a : b)).toString()
  t.same(await logged(job.id, xids), [{ xid: latest, collapsed: true }], 'five transactions, one row')
  t.same([...(await syncFrom(app, acme.auth, between)).reported], [job.id], 'a token that saw two of the five: the job reported')
  t.equal(between.jobs.get(job.id)?.interview_count, 5, 'as it is now')
  t.same([...(await syncFrom(app, acme.auth, beforeAll)).reported], [job.id], 'a token from before them all: reported')
  const after = await walkThenSync(app, acme.auth)
  t.same([...(await syncFrom(app, acme.auth, after)).reported], [], 'a token from after the fold: nothing')
})

t.test('a single finished write keeps its own row, not collapsed', async t => {
  const job = await createJob(prisma, acme, { title: 'quiet' })
  const xids = [await write(job.id)]
  await untilFinished(prisma, xids)
  await foldScreenStats(prisma)
  t.same(await logged(job.id, xids), [{ xid: xids[0], collapsed: false }])
})

t.test('writes above a transaction still running keep a row each, and are reported to a token that has them in progress', { skip: db.url === undefined ? 'needs a PostgreSQL server (TEST_DATABASE_URL): the embedded database has one connection' : false }, async t => {
  const job = await createJob(prisma, acme, { title: 'beside a long transaction' })
  const long = new pg.Client({ connectionString: db.url })
  await long.connect()
  t.teardown(async () => await long.end())
  await long.query('BEGIN')
  await long.query('SELECT pg_current_xact_id()')
  const before = await walkThenSync(app, acme.auth)
  const xids = [await write(job.id), await write(job.id)]
  await foldScreenStats(prisma)
  t.same(await logged(job.id, xids), xids.map(xid => ({ xid, collapsed: false })), 'a row for each: neither is below the oldest running transaction')
  await long.query('COMMIT')
  t.same([...(await syncFrom(app, acme.auth, before)).reported], [job.id], 'a token from before them: reported')
})
