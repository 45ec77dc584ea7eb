import pg from 'pg'
import t, { type Test } from 'tap'
import { buildTestApp } from '../../helpers/app.js'
import { createJob, createScreens, createTenant, keyWithScopes, type Tenant } from '../../helpers/fixtures.js'
import { foldScreenStats, verifyScreenStats } from '../../../src/admin/screen-stats.js'
import { expireSyncTokens } from '../../../src/admin/sync-tokens.js'
import { walkThenSync, syncFrom, type Mirror } from '../../helpers/sync-mirror.js'
import { untilFinished } from '../../helpers/until-finished.js'
import { SignedJson } from '../../../src/signed-json.js'
import { clientReader } from '../../../src/db/sql-reader.js'

// Incremental sync (issue 24): a walk of the list ends with a sync_token; changed_since
// answers the jobs changed after it (and the ids gone from the organization), each change
// at least once, whenever it committed. The mirror helper (test/helpers/sync-mirror.ts) is what a partner
// does; the database is the reference: a fresh walk.

const CURSOR_SECRET = 'a secret the tests know, to write tokens of other releases and points'
const { app, prisma, db } = await buildTestApp(t, { env: { SYNC_PRUNE_INTERVAL_MS: '0', CURSOR_SECRET } })
const signer = new SignedJson(CURSOR_SECRET)
/** A token's payload, to be changed and signed again. */
const payloadOf = (token: string): Record<string, unknown> => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())
const acme = await createTenant(prisma)
const globex = await createTenant(prisma)
const jobs: Array<Awaited<ReturnType<typeof createJob>>> = []
for (let i = 0; i < 7; i++) jobs.push(await createJob(prisma, acme, { title: `Acme ${i}`, createdAt: new Date(Date.UTC(2026, 0, 1 + i)), questions: i % 3 }))
await createScreens(prisma, jobs[0]!.id, [{ status: 'completed', score: 50, completedAt: new Date('2026-02-02T10:00:00Z') }, { status: 'in_progress' }])
await createJob(prisma, globex, { title: 'Globex 0' })

const get = async (url: string, tenant: Tenant = acme) => await app.inject({ url, headers: tenant.auth })
/**
 * The upkeep's run, now: it skips a run while the app's fold holds their shared lock (the next
 * minute's run does it), so the test waits for the locks first (advisory locks are reentrant).
 */
const prune = async (retentionSeconds: number): Promise<number> => (await prisma.$transaction([
  prisma.$executeRaw`SELECT pg_advisory_xact_lock(8146720561340518), pg_advisory_xact_lock(8146720561340517)`,
  prisma.$queryRaw<Array<{ removed: number }>>`SELECT prune_job_changes(${retentionSeconds}::int) AS removed`,
]))[1][0]!.removed
const ids = (mirror: Mirror): string[] => [...mirror.jobs.keys()].sort()
/** `token` answers 410 sync_token_expired (the SDK walks again). */
const expectExpired = async (t: Test, token: string, message = 'a 410'): Promise<void> => {
  const res = await get(`/api/jobs?changed_since=${encodeURIComponent(token)}`)
  t.equal(res.statusCode, 410, message)
  t.equal(res.json().code, 'sync_token_expired')
}

t.test('a walk without status ends with a sync token; nothing changed since: an empty sync with a new token', async t => {
  const first = (await get('/api/jobs?limit=3')).json()
  t.equal(first.sync_token, null, 'not before the last page')
  t.same(first.deleted_ids, [])
  const mirror = await walkThenSync(app, acme.auth, { limit: 3 })
  t.equal(mirror.jobs.size, 7)
  const res = await get(`/api/jobs?changed_since=${encodeURIComponent(mirror.token)}`)
  t.equal(res.statusCode, 200)
  t.same(res.json().data, [], 'no job reported: every change before the token is in it')
  t.same(res.json().deleted_ids, [])
  t.equal(res.json().next_cursor, null)
  t.type(res.json().sync_token, 'string')
  t.equal((await get('/api/jobs?status=active')).json().sync_token, null, 'a filtered walk makes no token')
})

t.test('each kind of change is reported, as the job is now; the others are not', async t => {
  const mirror = await walkThenSync(app, acme.auth)
  const moved = await createJob(prisma, acme, { title: 'to be moved' })
  const deleted = await createJob(prisma, acme, { title: 'to be deleted' })
  const before = await walkThenSync(app, acme.auth)
  const globexBefore = await walkThenSync(app, globex.auth)
  t.ok(before.jobs.has(moved.id) && before.jobs.has(deleted.id))

  await createScreens(prisma, jobs[1]!.id, [{ status: 'completed', score: 90, completedAt: new Date('2026-03-03T10:00:00Z') }])
  await prisma.screen.updateMany({ where: { jobId: jobs[0]!.id, status: 'completed' }, data: { score: 10 } })
  await prisma.question.create({ data: { jobId: jobs[2]!.id, position: 50, text: 'new' } })
  await prisma.job.update({ where: { id: jobs[3]!.id }, data: { title: 'renamed' } })
  const created = await createJob(prisma, acme, { title: 'created' })
  await prisma.job.delete({ where: { id: deleted.id } })
  await prisma.$executeRaw`UPDATE jobs SET organization_id = ${globex.organizationId}::uuid, user_id = ${globex.userId}::uuid WHERE id = ${moved.id}::uuid`

  const changes = await syncFrom(app, acme.auth, before)
  t.same([...changes.reported].sort(), [jobs[0]!.id, jobs[1]!.id, jobs[2]!.id, jobs[3]!.id, created.id].sort(), 'exactly the changed jobs')
  t.same([...changes.deleted].sort(), [deleted.id, moved.id].sort(), 'deleted and moved out')
  t.equal(before.jobs.get(jobs[3]!.id)?.title, 'renamed', 'as it is now')
  t.equal(before.jobs.get(jobs[0]!.id)?.average_score, 10)
  t.equal(before.jobs.get(jobs[1]!.id)?.interview_count, 1)
  t.same(ids(before), ids(await walkThenSync(app, acme.auth)), 'the mirror holds what a new walk finds')

  const globexChanges = await syncFrom(app, globex.auth, globexBefore)
  t.same([...globexChanges.reported], [moved.id], 'the job moved in is reported to its new organization')
  t.same([...globexChanges.deleted], [])
  t.ok(mirror.token !== before.token)
})

t.test('a change committed during the walk, to a job already listed, is reported by the next sync', async t => {
  const page1 = (await get('/api/jobs?limit=2')).json()
  const listed = page1.data[0].id as string
  await prisma.job.update({ where: { id: listed }, data: { title: 'changed mid-walk' } })
  let cursor = page1.next_cursor as string | null
  let token: string | null = null
  while (cursor !== null) {
    const page = (await get(`/api/jobs?limit=2&cursor=${encodeURIComponent(cursor)}`)).json()
    cursor = page.next_cursor
    token = page.sync_token
  }
  t.type(token, 'string')
  const sync = (await get(`/api/jobs?changed_since=${encodeURIComponent(token!)}`)).json()
  t.ok(sync.data.some((j: { id: string, title: string }) => j.id === listed && j.title === 'changed mid-walk'))
})

t.test('a sync is paginated in the order of the changes; only its last page has the next token', async t => {
  const mirror = await walkThenSync(app, acme.auth)
  for (const job of jobs.slice(0, 5)) await prisma.job.update({ where: { id: job.id }, data: { description: 'paged' } })
  let cursor: string | null = null
  const seen: string[] = []
  let pages = 0
  let token: string | null = null
  do {
    const res = await get(`/api/jobs?limit=2&changed_since=${encodeURIComponent(mirror.token)}${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    t.equal(res.statusCode, 200)
    const body = res.json()
    seen.push(...body.data.map((j: { id: string }) => j.id))
    t.equal(body.sync_token === null, body.next_cursor !== null, 'a token exactly on the last page')
    cursor = body.next_cursor
    token = body.sync_token
    pages++
  } while (cursor !== null)
  t.equal(pages, 3)
  t.same(seen, jobs.slice(0, 5).map(j => j.id), 'in the order of their transactions, each once')
  t.same((await get(`/api/jobs?changed_since=${encodeURIComponent(token!)}`)).json().data, [], 'the new token is past them')
})

t.test('refused tokens and cursors: 400 in the error shape, nothing of another organization', async t => {
  const mine = (await walkThenSync(app, acme.auth)).token
  const theirs = (await walkThenSync(app, globex.auth)).token
  const [body, signature] = mine.split('.')
  const tampered = `${Buffer.from(Buffer.from(body!, 'base64url').toString().replace(/"x":"(\d)/, '"x":"9$1')).toString('base64url')}.${signature}`
  const listCursor = (await get('/api/jobs?limit=1')).json().next_cursor as string
  const syncCursor = await (async () => {
    await prisma.job.update({ where: { id: jobs[0]!.id }, data: { description: 'one' } })
    await prisma.job.update({ where: { id: jobs[1]!.id }, data: { description: 'two' } })
    return (await get(`/api/jobs?limit=1&changed_since=${encodeURIComponent(mine)}`)).json().next_cursor as string
  })()
  t.type(syncCursor, 'string')
  const cases: Array<[string, string, Tenant?]> = [
    ['another organization\'s token', `?changed_since=${encodeURIComponent(theirs)}`],
    ['my token, used by the other organization', `?changed_since=${encodeURIComponent(mine)}`, globex],
    ['a tampered token', `?changed_since=${encodeURIComponent(tampered)}`],
    ['garbage', '?changed_since=abc'],
    ['a list cursor as a token', `?changed_since=${encodeURIComponent(listCursor)}`],
    ['a token as a list cursor', `?cursor=${encodeURIComponent(mine)}`],
    ['a sync cursor in a walk', `?cursor=${encodeURIComponent(syncCursor)}`],
    ['a sync cursor with another token', `?changed_since=${encodeURIComponent((await walkThenSync(app, acme.auth)).token)}&cursor=${encodeURIComponent(syncCursor)}`],
    ['a list cursor in a sync', `?changed_since=${encodeURIComponent(mine)}&cursor=${encodeURIComponent(listCursor)}`],
    ['changed_since with status', `?status=active&changed_since=${encodeURIComponent(mine)}`],
  ]
  for (const [what, query, tenant] of cases) {
    const res = await get(`/api/jobs${query}`, tenant)
    t.equal(res.statusCode, 400, what)
    t.equal(res.json().code, 'invalid_request', what)
    t.notOk(res.body.includes(jobs[0]!.id), `${what}: no job in the body`)
  }
  t.equal((await get(`/api/jobs?limit=1&changed_since=${encodeURIComponent(mine)}&cursor=${encodeURIComponent(syncCursor)}`)).statusCode, 200, 'the cursor with its own token')
})

t.test('a token older than the change log kept answers 410 sync_token_expired; a new walk gives a working one', async t => {
  const old = (await walkThenSync(app, acme.auth)).token
  await prisma.job.update({ where: { id: jobs[4]!.id }, data: { description: 'before the retention' } })
  // Logged two hours ago, as far as the retention can tell (it keeps at least an hour).
  await prisma.$executeRaw`UPDATE job_changes SET logged_at = logged_at - interval '2 hours'`
  const removed = await prune(0)
  t.ok(removed > 0, `the retention removed ${removed} rows`)
  await expectExpired(t, old)
  // The retention removed the file's every row: a token taken while a transaction older than
  // them runs (another file's, on a shared server) may not have seen one, and answers 410 too.
  await untilFinished(prisma)
  const fresh = await walkThenSync(app, acme.auth)
  t.equal((await get(`/api/jobs?changed_since=${encodeURIComponent(fresh.token)}`)).statusCode, 200)
})

t.test('expire-sync-tokens (after a restore or a lossy failover): every earlier token answers 410, later ones work', async t => {
  const before = await walkThenSync(app, acme.auth)
  t.equal((await get(`/api/jobs?changed_since=${encodeURIComponent(before.token)}`)).statusCode, 200)
  await expireSyncTokens(clientReader(prisma))
  await expectExpired(t, before.token)
  const after = await walkThenSync(app, acme.auth)
  t.equal((await get(`/api/jobs?changed_since=${encodeURIComponent(after.token)}`)).statusCode, 200)
})

t.test('collapsing a job\'s finished changes into one row keeps every token exact or conservative', async t => {
  const before = await walkThenSync(app, acme.auth)
  for (let i = 0; i < 5; i++) await createScreens(prisma, jobs[5]!.id, [{ status: 'in_progress' }])
  // The fold logs the screens' changes: fold now rather than wait for the instance's timer.
  // It collapses finished ones itself (fold-collapse.test.ts); a job's own writes are logged
  // a row each, for the upkeep to collapse.
  await foldScreenStats(prisma)
  for (let i = 0; i < 5; i++) await prisma.job.update({ where: { id: jobs[5]!.id }, data: { description: `collapsed ${i}` } })
  const rows = async () => Number((await prisma.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM job_changes WHERE job_id = ${jobs[5]!.id}::uuid`)[0]!.n)
  t.ok(await rows() >= 5, 'a row per writer transaction')
  // Finished for the upkeep, and below the next token's xmin (else conservative: reported again).
  await untilFinished(prisma)
  const after = await walkThenSync(app, acme.auth)
  await prune(86400)
  t.equal(await rows(), 1, 'one row left')
  t.same([...(await syncFrom(app, acme.auth, before)).reported], [jobs[5]!.id], 'the older token still gets the job')
  t.same([...(await syncFrom(app, acme.auth, after)).reported], [], 'the newer one does not')
})

t.test('out of order: a transaction open before the walk, committed after it, is reported', { skip: db.url === undefined ? 'needs a PostgreSQL server (TEST_DATABASE_URL): the embedded database has one connection' : false }, async t => {
  const writer = new pg.Client({ connectionString: db.url })
  await writer.connect()
  t.teardown(async () => { await writer.end() })
  await writer.query('BEGIN')
  await writer.query('INSERT INTO screens (job_id, status, started_at) VALUES ($1, \'in_progress\', now())', [jobs[6]!.id])
  // A later transaction commits first: the log's order is not the commit order.
  await prisma.job.update({ where: { id: jobs[2]!.id }, data: { description: 'committed first' } })
  const mirror = await walkThenSync(app, acme.auth)
  await writer.query('COMMIT')
  await foldScreenStats(prisma)
  const changes = await syncFrom(app, acme.auth, mirror)
  t.ok(changes.reported.has(jobs[6]!.id), 'the transaction that committed after the walk')
  t.equal(mirror.jobs.get(jobs[6]!.id)?.interview_count, 1)
})

t.test('an organization without jobs: its walk\'s empty page makes a token, and its first job comes in the next sync', async t => {
  const empty = await createTenant(prisma)
  const first = (await get('/api/jobs', empty)).json()
  t.same(first.data, [])
  t.type(first.sync_token, 'string')
  const job = await createJob(prisma, empty, { title: 'the first' })
  const sync = (await get(`/api/jobs?changed_since=${encodeURIComponent(first.sync_token)}`, empty)).json()
  t.same(sync.data.map((j: { id: string }) => j.id), [job.id])
})

t.test('the retention keeps at least an hour, whoever calls the upkeep (the API\'s role may)', async t => {
  const mirror = await walkThenSync(app, acme.auth)
  await prisma.job.update({ where: { id: jobs[4]!.id }, data: { description: 'recent' } })
  await prune(0)
  const res = await get(`/api/jobs?changed_since=${encodeURIComponent(mirror.token)}`)
  t.equal(res.statusCode, 200, 'a change of a minute ago is kept')
  t.ok(res.json().data.some((j: { id: string }) => j.id === jobs[4]!.id))
})

t.test('a token whose snapshot lies ahead of the server\'s (the database went back in time) answers 410', async t => {
  const { token } = await walkThenSync(app, acme.auth)
  const payload = payloadOf(token)
  const xmax = BigInt(String(payload.x).split(':')[1]!)
  const ahead = signer.seal({ ...payload, x: `${xmax + 1_000_000n}:${xmax + 1_000_000n}:` })
  await expectExpired(t, ahead)
  t.equal((await get(`/api/jobs?changed_since=${encodeURIComponent(token)}`)).statusCode, 200, 'the same token at its own point: 200')
})

t.test('tokens and walk cursors of the release before (no database history): 410, never 400 or 500', async t => {
  const { token } = await walkThenSync(app, acme.auth)
  const { h: _, ...before } = payloadOf(token)
  await expectExpired(t, signer.seal(before), 'a token without its history')
  const page1 = (await get('/api/jobs?limit=2')).json()
  const { h: __, ...cursorBefore } = payloadOf(page1.next_cursor)
  let cursor: string | null = signer.seal(cursorBefore)
  let walked: string | null = null
  while (cursor !== null) {
    const page = await get(`/api/jobs?limit=2&cursor=${encodeURIComponent(cursor)}`)
    t.equal(page.statusCode, 200, 'a walk goes on from a cursor of the release before')
    cursor = page.json().next_cursor
    walked = page.json().sync_token
  }
  t.equal((await get(`/api/jobs?changed_since=${encodeURIComponent(walked!)}`)).statusCode, 410, 'and its token answers 410: the walk\'s first pages named no history')
  t.not(payloadOf(token).h, '', 'a token of this release names one')
})

t.test('changes made with the triggers off: a rebuild logs the jobs whose figures it changed; expire-sync-tokens makes every token answer 410', async t => {
  const before = await walkThenSync(app, acme.auth)
  // A load with the triggers off (a bulk import), then the rebuild of the summaries it needs.
  await prisma.$transaction([
    prisma.$executeRawUnsafe('SET LOCAL session_replication_role = replica'),
    prisma.$executeRaw`INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES (${jobs[4]!.id}::uuid, 'completed', 33, now(), now())`,
  ])
  t.same([...(await syncFrom(app, acme.auth, { ...before, jobs: new Map(before.jobs) })).reported], [], 'nothing logged by the load itself')
  await prisma.$executeRaw`SELECT rebuild_screen_summaries(ARRAY[${jobs[4]!.id}::uuid, ${jobs[5]!.id}::uuid])`
  const changes = await syncFrom(app, acme.auth, before)
  t.same([...changes.reported], [jobs[4]!.id], 'the job whose figures changed, not the other rebuilt one')
  t.equal(before.jobs.get(jobs[4]!.id)?.interview_count, (await walkThenSync(app, acme.auth)).jobs.get(jobs[4]!.id)?.interview_count)
  // A job's fields changed with the triggers off cannot be found again: the remedy is to expire every token.
  await prisma.$transaction([
    prisma.$executeRawUnsafe('SET LOCAL session_replication_role = replica'),
    prisma.$executeRaw`UPDATE jobs SET title = 'loaded with the triggers off' WHERE id = ${jobs[6]!.id}::uuid`,
  ])
  await expireSyncTokens(clientReader(prisma))
  t.equal((await get(`/api/jobs?changed_since=${encodeURIComponent(before.token)}`)).statusCode, 410, 'every earlier token, after expire-sync-tokens')
  t.equal((await walkThenSync(app, acme.auth)).jobs.get(jobs[6]!.id)?.title, 'loaded with the triggers off', 'a new walk has it')
})

t.test('a key that cannot read analytics (scope or plan) is told only of changes to what a job shows (issue 35, part 5)', async t => {
  const jobsOnly = await keyWithScopes(prisma, acme, ['jobs:read'])
  const free = await createTenant(prisma, { plan: 'free' })
  const [job, freeJob] = [await createJob(prisma, acme, { title: 'analytics only' }), await createJob(prisma, free, { title: 'free' })]
  for (const id of [job.id, freeJob.id]) await createScreens(prisma, id, [{ status: 'in_progress' }, { status: 'in_progress' }, { status: 'completed', score: 40, completedAt: new Date('2026-01-05T10:00:00Z') }])
  await foldScreenStats(prisma)
  const mirrors = { full: await walkThenSync(app, acme.auth), jobsOnly: await walkThenSync(app, jobsOnly.auth), free: await walkThenSync(app, free.auth) }
  const sync = async (): Promise<Record<keyof typeof mirrors, string[]>> => ({
    full: [...(await syncFrom(app, acme.auth, mirrors.full)).reported],
    jobsOnly: [...(await syncFrom(app, jobsOnly.auth, mirrors.jobsOnly)).reported],
    free: [...(await syncFrom(app, free.auth, mirrors.free)).reported],
  })
  const screenOf = async (jobId: string, status: string): Promise<string> => (await prisma.screen.findFirstOrThrow({ where: { jobId, status: status as 'in_progress' } })).id

  // A screen's status alone (in progress to expired): the interview count and the average stay.
  for (const id of [job.id, freeJob.id]) await prisma.screen.update({ where: { id: await screenOf(id, 'in_progress') }, data: { status: 'expired' } })
  t.same(await sync(), { full: [job.id], jobsOnly: [], free: [] }, 'unfolded: only to the key that reads analytics')
  for (const id of [job.id, freeJob.id]) await prisma.screen.update({ where: { id: await screenOf(id, 'in_progress') }, data: { status: 'expired' } })
  await foldScreenStats(prisma)
  t.same(await sync(), { full: [job.id], jobsOnly: [], free: [] }, 'folded: the same')
  // A completion moved to another week: the weekly bins alone.
  for (const id of [job.id, freeJob.id]) await prisma.screen.update({ where: { id: await screenOf(id, 'completed') }, data: { completedAt: new Date('2026-02-02T10:00:00Z') } })
  t.same(await sync(), { full: [job.id], jobsOnly: [], free: [] }, 'a completion moved to another week: the same')
  // A score: the average, which every key reads.
  for (const id of [job.id, freeJob.id]) await prisma.screen.update({ where: { id: await screenOf(id, 'completed') }, data: { score: 90 } })
  // Tokens taken while another file's transaction older than these writes runs would get them
  // again once collapsed (by design: a collapsed row goes to every token whose xmin is not above it).
  await untilFinished(prisma)
  t.same(await sync(), { full: [job.id], jobsOnly: [job.id], free: [freeJob.id] }, 'a score: to every key')
  // And the collapse keeps the difference: two changes of analytics alone collapse into one.
  for (let i = 0; i < 2; i++) await prisma.screen.update({ where: { id: await screenOf(job.id, 'completed') }, data: { completedAt: new Date(Date.UTC(2026, 2, 2 + 7 * i, 10)) } })
  await foldScreenStats(prisma)
  await prune(86400)
  t.same(await sync(), { full: [job.id], jobsOnly: [], free: [] }, 'collapsed: the same')

  for (const [name, tenant] of [['jobsOnly', jobsOnly], ['free', free]] as const) {
    const truth = await walkThenSync(app, tenant.auth)
    t.same([...mirrors[name].jobs.entries()].sort(), [...truth.jobs.entries()].sort(), `${name}: the mirror equals a fresh walk`)
  }
  // The jobs-only key's syncs skipped changes its organization's other keys read: a key that
  // reads analytics gets 410 for its token (its partner walks again, and fetches them).
  await expectExpired(t, mirrors.jobsOnly.token, 'a token whose syncs skipped analytics, with a key that reads them')
  t.equal((await get(`/api/jobs?changed_since=${encodeURIComponent(mirrors.jobsOnly.token)}`, jobsOnly)).statusCode, 200, 'with the key that made it: 200')
})

t.test('a transaction that changes a job\'s analytics alone, then its fields: the change is reported to every key', async t => {
  // The log's row for (organization, transaction, job) is one: whichever path writes it
  // first, a job's write makes it a change for every key.
  const jobsOnly = await keyWithScopes(prisma, acme, ['jobs:read'])
  const job = await createJob(prisma, acme, { title: 'before' })
  await createScreens(prisma, job.id, [{ status: 'completed', score: 40, completedAt: new Date('2026-01-05T10:00:00Z') }])
  await foldScreenStats(prisma)
  const mirror = await walkThenSync(app, jobsOnly.auth)
  await prisma.$transaction([
    // A completion moved with the triggers off, then the rebuild: analytics alone changed.
    prisma.$executeRawUnsafe('SET LOCAL session_replication_role = replica'),
    prisma.$executeRaw`UPDATE screens SET completed_at = '2026-02-02T10:00:00Z' WHERE job_id = ${job.id}::uuid`,
    prisma.$executeRawUnsafe('SET LOCAL session_replication_role = origin'),
    prisma.$executeRaw`SELECT rebuild_screen_summaries(ARRAY[${job.id}::uuid])`,
    prisma.$executeRaw`UPDATE jobs SET title = 'after' WHERE id = ${job.id}::uuid`,
  ])
  t.same([...(await syncFrom(app, jobsOnly.auth, mirror)).reported], [job.id], 'to a key without analytics')
  t.equal(mirror.jobs.get(job.id)?.title, 'after', 'its mirror has the new title')
})

t.test('verify-stats --fix: the jobs it repaired are reported, to the keys that read what changed', async t => {
  const jobsOnly = await keyWithScopes(prisma, acme, ['jobs:read'])
  await foldScreenStats(prisma)
  // What the fold logged, below the walks' tokens' xmin: not reported to them again.
  await untilFinished(prisma)
  // Summaries that drifted from the screens (written by hand): an interview count, and a
  // week's completions (a segment), which only analytics show.
  await prisma.$executeRaw`UPDATE job_screen_stats SET in_progress = in_progress + 5 WHERE job_id = ${jobs[1]!.id}::uuid AND slot = 0`
  await prisma.$executeRaw`INSERT INTO job_completion_segments (job_id, segment, slot, completed, scored, score_sum) VALUES (${jobs[0]!.id}::uuid, '2025-06-02T12:00:00Z', 0, 1, 1, 50)`
  const full = await walkThenSync(app, acme.auth)
  const restricted = await walkThenSync(app, jobsOnly.auth)
  t.equal(full.jobs.get(jobs[1]!.id)?.interview_count, 6, 'the drift shows')
  const fixed = await verifyScreenStats(prisma, { fix: true })
  t.same(fixed.repaired.sort(), [jobs[0]!.id, jobs[1]!.id].sort(), 'both repaired')
  await foldScreenStats(prisma)
  t.same([...(await syncFrom(app, acme.auth, full)).reported].sort(), [jobs[0]!.id, jobs[1]!.id].sort(), 'to a key that reads analytics: both')
  t.same([...(await syncFrom(app, jobsOnly.auth, restricted)).reported], [jobs[1]!.id], 'to a key that does not: the interview count only')
  t.equal(full.jobs.get(jobs[1]!.id)?.interview_count, 1, 'as it is now')
})

// Each way the log, its pending part or the deltas can lose a change by hand (issue 40, part
// 4): no row trigger fires on a TRUNCATE, and a row moved to another transaction or job is a
// change lost where it was. Each is done right after an unfolded change of each kind (a title,
// a question, a screen), so that a 200 would hide one; then the summaries are rebuilt.
const LOSSES = [
  'TRUNCATE job_changes',
  'TRUNCATE screen_summary_deltas',
  'TRUNCATE job_changes_pending',
  'DELETE FROM job_changes',
  'UPDATE job_changes SET xid = \'1\'::xid8 WHERE ctid = (SELECT ctid FROM job_changes ORDER BY xid DESC LIMIT 1)',
  'UPDATE job_changes SET organization_id = gen_random_uuid()',
  'UPDATE screen_summary_deltas SET job_id = gen_random_uuid()',
  'UPDATE job_changes_pending SET xid = \'1\'::xid8',
]
for (const loss of LOSSES) {
  t.test(`${loss} by hand: every earlier token answers 410, never a 200 that misses the change`, async t => {
    const before = await walkThenSync(app, acme.auth)
    await prisma.job.update({ where: { id: jobs[3]!.id }, data: { title: `before ${loss}` } })
    await prisma.question.create({ data: { jobId: jobs[3]!.id, position: 100 + LOSSES.indexOf(loss), text: 'lost?' } })
    await createScreens(prisma, jobs[3]!.id, [{ status: 'in_progress' }])
    await prisma.$executeRawUnsafe(loss)
    await expectExpired(t, before.token)
    await prisma.$executeRawUnsafe('SELECT rebuild_screen_summaries()')
    const after = await walkThenSync(app, acme.auth)
    t.equal(after.jobs.get(jobs[3]!.id)?.title, `before ${loss}`, 'a new walk has the change')
    t.equal((await get(`/api/jobs?changed_since=${encodeURIComponent(after.token)}`)).statusCode, 200, 'and its token works')
  })
}

t.test('the fold and the upkeep delete from the log, its pending part and the deltas without expiring any token', async t => {
  // Earlier changes below the token's xmin: a row the upkeep collapses goes again to a token
  // whose xmin is not above it (another file's transaction holding it back in CI).
  await untilFinished(prisma)
  const before = await walkThenSync(app, acme.auth)
  await prisma.question.create({ data: { jobId: jobs[2]!.id, position: 200, text: 'pending, then folded' } })
  await createScreens(prisma, jobs[2]!.id, [{ status: 'in_progress' }])
  await foldScreenStats(prisma)
  const count = async (table: string): Promise<number> => Number((await prisma.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM ${table}`))[0]!.n)
  t.equal(await count('job_changes_pending'), 0, 'the fold moved the pending changes into the log')
  t.equal(await count('screen_summary_deltas'), 0, 'and the deltas into the summaries')
  await untilFinished(prisma) // the upkeep collapses finished transactions only
  await prune(86400)
  t.equal(Number((await prisma.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM job_changes WHERE NOT collapsed AND job_id = ${jobs[2]!.id}::uuid`)[0]!.n), 0, 'the upkeep collapsed the job\'s rows')
  t.same([...(await syncFrom(app, acme.auth, before)).reported], [jobs[2]!.id], 'a token made before: 200, the job reported')
})

// Last: it empties the tables.
t.test('TRUNCATE of jobs (cascaded from organizations too) expires every token: nothing is left to log', async t => {
  const generation = async (): Promise<number> => (await prisma.$queryRaw<Array<{ g: number }>>`SELECT generation AS g FROM job_changes_horizon`)[0]!.g
  const was = await generation()
  await prisma.$executeRawUnsafe('TRUNCATE organizations CASCADE')
  t.not(await generation(), was, 'cascaded from organizations: a new generation')
  const survivor = await createTenant(prisma)
  const after = await walkThenSync(app, survivor.auth)
  await prisma.$executeRawUnsafe('TRUNCATE jobs CASCADE')
  const gone = await get(`/api/jobs?changed_since=${encodeURIComponent(after.token)}`, survivor)
  t.equal(gone.statusCode, 410)
  t.equal(gone.json().code, 'sync_token_expired')
})
