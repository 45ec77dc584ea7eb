import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import t, { type Test } from 'tap'
import { buildApp } from '../../../src/app.js'
import { loadConfig } from '../../../src/config.js'
import { openServerDatabase } from '../../../src/db/server-database.js'
import { buildTestApp } from '../../helpers/app.js'
import { serverUrl } from '../../helpers/database.js'
import { createJob, createTenant } from '../../helpers/fixtures.js'
import { replicationTools, startCluster } from '../../helpers/replication.js'
import { walkThenSync } from '../../helpers/sync-mirror.js'

// A sync token made on one database history and presented to another (issue 35, part 2): the
// test's database dumped with pg_dump, a job changed, a walk's token (it saw the change), then
// the dump restored into a fresh cluster of our own (initdb in a temporary directory), or into
// another database of the same server, and the service run on the copy with the same
// CURSOR_SECRET. The copy holds the change log and its generation as they were at the dump;
// its transaction ids are another history's; the change the token saw is not there. Every old
// token must answer 410 there, never 200: a 200 leaves the mirror with what the copy no longer
// has, and may miss what changes on the copy (reproduced before this change: 200, no job, a
// fresh token). A token made on the copy works there.

const tools = replicationTools()
const bindir = 'bindir' in tools ? tools.bindir : undefined
function skipReason (): string | false {
  if (serverUrl === undefined) return 'needs TEST_DATABASE_URL: the server suite has PostgreSQL\'s server tools'
  if ('missing' in tools) return tools.missing
  const absent = ['pg_dump', 'pg_resetwal'].find(tool => !existsSync(join(tools.bindir, tool)))
  return absent === undefined ? false : `${absent} not in ${tools.bindir}`
}
const skip = skipReason()
const run = promisify(execFile)
const CURSOR_SECRET = 'the same secret on both sides of the restore, 48 characters long....'

const { app, prisma, db } = await buildTestApp(t, { env: { CURSOR_SECRET, SYNC_PRUNE_INTERVAL_MS: '0', SUMMARY_FOLD_INTERVAL_MS: '0' } })
const tenant = await createTenant(prisma)
const job = await createJob(prisma, tenant, { title: 'before the dump', questions: 3 })
const other = await createJob(prisma, tenant, { title: 'another' })

/** The app of this file, on a copy of its database restored at `url` (as its owner). */
async function appOn (t: Test, url: string): Promise<Awaited<ReturnType<typeof buildApp>>> {
  const config = loadConfig({ LOG_LEVEL: 'silent', CURSOR_SECRET, SYNC_PRUNE_INTERVAL_MS: '0', SUMMARY_FOLD_INTERVAL_MS: '0', DATABASE_URL: url })
  const database = openServerDatabase(url, config)
  const restored = await buildApp({ config, database })
  t.teardown(async () => { await restored.close() })
  await restored.ready()
  return restored
}

/**
 * A pg_dump of the test's database, without owners or grants (the copy has other roles), then
 * a change the copy will not have, then a walk: the token saw the change, the copy goes back
 * to before it. Returns the token and a restore of the dump into `target` (an empty database).
 */
async function dumpThenWalk (t: Test): Promise<{ token: string, restoreInto: (target: string) => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'screening-dump-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  await run(join(bindir!, 'pg_dump'), ['--no-owner', '--no-privileges', '-f', join(dir, 'dump.sql'), db.url!])
  await prisma.job.update({ where: { id: other.id }, data: { title: `after the dump ${Math.random()}` } })
  const { token } = await walkThenSync(app, tenant.auth)
  return { token, restoreInto: async target => { await run('psql', [target, '-q', '-v', 'ON_ERROR_STOP=1', '-f', join(dir, 'dump.sql')]) } }
}

/** The largest transaction id a token of this database can name now. */
async function currentXmax (): Promise<bigint> {
  const [row] = await prisma.$queryRaw<Array<{ xmax: string }>>`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax`
  return BigInt(row!.xmax)
}

/**
 * Changes a title and adds a question on the copy, as the issue's reproduction did, then asks
 * with the old token. `older`: a transaction of the cluster, begun before the copy's log is
 * adopted and still running when a token is made there (the token's xmin is below the adoption).
 */
async function oldTokenOn (t: Test, restored: Awaited<ReturnType<typeof buildApp>>, url: string, token: string, older?: pg.Client): Promise<void> {
  const copy = new pg.Client({ connectionString: url })
  await copy.connect()
  t.teardown(async () => { await copy.end() })
  await copy.query('UPDATE jobs SET title = \'changed on the copy\' WHERE id = $1', [job.id])
  await copy.query('INSERT INTO questions (job_id, position, text) VALUES ($1, 50, \'added on the copy\')', [job.id])
  const res = await restored.inject({ url: `/api/jobs?changed_since=${encodeURIComponent(token)}`, headers: tenant.auth })
  t.equal(res.statusCode, 410, `the old token: ${res.statusCode}${res.statusCode === 200 ? ` with ${res.json().data.length} job(s): ${JSON.stringify(res.json().data.map((j: { title: string, question_count: number }) => [j.title, j.question_count]))}` : ''}`)
  t.equal(res.json().code, 'sync_token_expired')
  // The upkeep adopts the copy's history (within a minute of the service's start): the log
  // the copy brought starts over.
  t.equal((await copy.query<{ adopted: boolean }>('SELECT adopt_database_history() AS adopted')).rows[0]!.adopted, true, 'the copy\'s log adopted its history')
  const fresh = await walkThenSync(restored, tenant.auth)
  t.equal(fresh.jobs.get(job.id)?.title, 'changed on the copy', 'a walk of the copy sees the copy')
  const again = await restored.inject({ url: `/api/jobs?changed_since=${encodeURIComponent(fresh.token)}`, headers: tenant.auth })
  t.equal(again.statusCode, 200, `a token made on the copy works there${older === undefined ? '' : ', while a transaction older than the adoption runs in the cluster'}`)
  if (older !== undefined) t.equal((await older.query<{ running: boolean }>('SELECT true AS running')).rows[0]!.running, true, 'which still ran')
}

/**
 * A walk's token, its database dumped and restored into a fresh cluster of ours (initdb, with
 * `options` read after the walk): the token asked there.
 */
async function restoredIntoFreshCluster (t: Test, options: () => Promise<{ nextXid?: bigint }> = async () => ({})): Promise<void> {
  const { token, restoreInto } = await dumpThenWalk(t)
  const cluster = await startCluster(bindir!, await options())
  t.teardown(cluster.close)
  await run('psql', [cluster.url('postgres'), '-q', '-c', 'CREATE DATABASE restored'])
  await restoreInto(cluster.url('restored'))
  const [row] = (await run('psql', [cluster.url('restored'), '-Atc', 'SELECT pg_current_snapshot()'])).stdout.trim().split('\n')
  t.comment(`the token's point ${JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).x}; the fresh cluster's ${row}`)
  await oldTokenOn(t, await appOn(t, cluster.url('restored')), cluster.url('restored'), token)
}

t.test('restored into a fresh cluster (initdb): an old token answers 410', { skip }, async t => {
  await restoredIntoFreshCluster(t)
})

t.test('restored into a fresh cluster whose transaction ids are past the token\'s: still 410 (another history, not only another point)', { skip }, async t => {
  const segment = 1_048_576n
  await restoredIntoFreshCluster(t, async () => ({ nextXid: (await currentXmax() / segment + 1n) * segment }))
})

t.test('restored into another database of the same server (its transaction ids go on): 410', { skip }, async t => {
  const { token, restoreInto } = await dumpThenWalk(t)
  const name = `${new URL(db.url!).pathname.slice(1)}_restored`
  const admin = new pg.Client({ connectionString: db.url })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  t.teardown(async () => { await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await admin.end() })
  const url = new URL(db.url!)
  url.pathname = `/${name}`
  await restoreInto(url.toString())
  // Until migration 20261127210000 the adoption moved pruned_through to its own transaction:
  // every token made while an older one ran anywhere in the cluster answered 410.
  const older = new pg.Client({ connectionString: db.url })
  await older.connect()
  await older.query('BEGIN')
  await older.query('SELECT pg_current_xact_id()')
  t.teardown(async () => { await older.query('COMMIT'); await older.end() })
  await oldTokenOn(t, await appOn(t, url.toString()), url.toString(), token, older)
})
