import { createRequire } from 'node:module'
import pg from 'pg'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { SignedJson } from '../../src/signed-json.js'
import { productionDatabase, serverUrl } from '../helpers/database.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'
import { replicationTools, startReplicatedPair } from '../helpers/replication.js'
import { until } from '../helpers/until.js'
import { sleep } from '../helpers/sleep.js'

const OLDER_RULES = createRequire(import.meta.url).resolve('moment-timezone-2025b/data/packed/latest.json')

// DATABASE_REPLICA_URLS for real: a primary and a streaming standby made with PostgreSQL's
// own tools (test/helpers/replication.ts), the app connected as the API's restricted role.
// Shows that reads reach the standby (its data, while replay is paused, and its sessions in
// pg_stat_activity), that a lagging standby is skipped, that stopping it under load leaves
// every answer a 200 (reads fall back to the primary), and that reads return to it after.

const tools = replicationTools()
const skip = serverUrl === undefined
  ? 'needs TEST_DATABASE_URL: the server suite has PostgreSQL\'s server tools'
  : 'missing' in tools ? tools.missing : false
const MAX_LAG_MS = 1500
const CHECK_MS = 200

t.test('reads go to a healthy replica, and to the primary when it lags or is down', { skip }, async t => {
  if ('missing' in tools) return
  const pair = await startReplicatedPair(tools.bindir)
  t.teardown(pair.close)
  const figures: string[] = []
  t.teardown(() => { console.log(`# figures: read replica: ${figures.join('; ')}`) })

  // The database, migrated, with the API's role, as production sets it up.
  const owner = await productionDatabase(t, db => pair.primaryUrl(db))
  const asApi = (url: string): string => url.replace('postgres@', 'screening_api@')

  const tenant = await createTenant(owner.prisma, { plan: 'pro' })
  const job = await createJob(owner.prisma, tenant, { questions: 2 })
  await createScreens(owner.prisma, job.id, [{ status: 'completed', score: 80, completedAt: new Date('2026-01-05T10:00:00Z') }, { status: 'in_progress' }])

  const standby = new pg.Client({ connectionString: pair.standbyUrl('screening') })
  await until('the standby has the data', async () => {
    await standby.connect().catch(() => {})
    return (await standby.query('SELECT count(*)::int AS n FROM screens').catch(() => ({ rows: [{ n: 0 }] }))).rows[0].n === 2
  }, 10_000)
  await standby.end()

  const config = loadConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '1000000',
    AUTH_CACHE_TTL_MS: '0',
    DATABASE_URL: asApi(pair.primaryUrl('screening')),
    DATABASE_REPLICA_URLS: asApi(pair.standbyUrl('screening')),
    REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
    REPLICA_CHECK_INTERVAL_MS: String(CHECK_MS),
    CURSOR_SECRET: 'x'.repeat(32),
    METRICS_TOKEN: 'metrics-token-for-tests-0123456789',
  })
  const database = openServerDatabase(config.DATABASE_URL!, config, { replicaUrls: [config.DATABASE_REPLICA_URLS] })
  const app = await buildApp({ config, database })
  t.teardown(() => app.close())
  const interviews = async (): Promise<number> => {
    const res = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    return (res.json() as { interview_count: number }).interview_count
  }
  const replicaState = () => app.database.replicas()[0]!

  await until('the replica is up', async () => replicaState().status === 'up', 5000)
  // Readiness's detail is the operator's: it needs the metrics token.
  const operator = { authorization: 'Bearer metrics-token-for-tests-0123456789' }
  const ready = await app.inject({ url: '/health/ready', headers: operator })
  t.match(ready.json(), { status: 'ok', databases: { primary: 'up', replicas: [{ name: `127.0.0.1:${new URL(pair.standbyUrl('x')).port}/screening`, status: 'up' }] } }, '/health/ready lists the replica as up')

  // A write on the primary that the standby has replayed and the app has seen it replay:
  // its lag is measured from here, and a walk after it sees the write. The standby's replay
  // position is read itself, as the app's lag figure comes from its last check, which may
  // predate the write (a sync then reported the job: seen once on a loaded CI machine).
  const writeAndReplay = async (): Promise<void> => {
    await owner.prisma.$executeRaw`UPDATE jobs SET title = title WHERE id = ${job.id}::uuid`
    const written = String((await owner.prisma.$queryRaw<Array<{ lsn: string }>>`SELECT pg_current_wal_lsn()::text AS lsn`)[0]!.lsn)
    const replayed = new pg.Client({ connectionString: pair.standbyUrl('screening') })
    await replayed.connect()
    try {
      await until('the standby replayed the write', async () => (await replayed.query<{ done: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [written])).rows[0]!.done, 5000)
    } finally {
      await replayed.end()
    }
    await until('the replica caught up', async () => replicaState().status === 'up' && replicaState().lagMs === 0, 3000)
  }

  // pg_wal_replay_pause() only asks: replay may go on a little. Wait until it has stopped,
  // or a write made next may still be replayed (seen: the sync subtest failed 3 runs in 13).
  const pauseReplay = async (control: pg.Client): Promise<void> => {
    await control.query('SELECT pg_wal_replay_pause()')
    await until('replay is paused', async () => (await control.query<{ state: string }>('SELECT pg_get_wal_replay_pause_state() AS state')).rows[0]!.state === 'paused', 5000)
  }

  await t.test('reads are served by the replica', async t => {
    await writeAndReplay()
    const control = new pg.Client({ connectionString: pair.standbyUrl('screening') })
    await control.connect()
    t.teardown(() => control.end())
    await pauseReplay(control)
    await createScreens(owner.prisma, job.id, [{ status: 'expired' }])
    t.equal(await interviews(), 2, 'a screen written to the primary is not in the answer: it came from the paused replica')
    const sessions = (await control.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'screening-read-api:replica' AND datname = 'screening'")).rows[0]!.n
    t.ok(sessions > 0, `the app's replica pool has ${sessions} session(s) on the standby`)
    figures.push(`reads on the replica: yes (a paused standby's count answered; ${sessions} replica session(s) in its pg_stat_activity)`)

    const skippedAfter = await until('the lagging replica is skipped', async () => await interviews() === 3, MAX_LAG_MS + 5 * CHECK_MS + 2000)
    t.equal(replicaState().status, 'lagging', 'and reported lagging')
    t.match((await app.inject({ url: '/health/ready', headers: operator })).json(), { status: 'ok', databases: { replicas: [{ status: 'lagging' }] } }, '/health/ready says so; still ready: the primary serves')
    figures.push(`lagging replica skipped ${skippedAfter.toFixed(0)} ms after its replay paused (REPLICA_MAX_LAG_MS ${MAX_LAG_MS}, checks every ${CHECK_MS} ms)`)

    await control.query('SELECT pg_wal_replay_resume()')
    const backAfter = await until('the replica is back in use', async () => replicaState().status === 'up', 5000)
    figures.push(`back in use ${backAfter.toFixed(0)} ms after replay resumed`)
  })

  await t.test('zone rules the standby has not replayed: that analytics read runs on the primary', async t => {
    await writeAndReplay()
    const control = new pg.Client({ connectionString: pair.standbyUrl('screening') })
    await control.connect()
    // Replay resumed whatever happens here: the next subtests need it.
    t.teardown(async () => { await control.query('SELECT pg_wal_replay_resume()').catch(() => {}); await control.end() })
    // An instance on another tzdata release stores its rules on the primary at its start. Its
    // bound on lag is generous, so that the paused standby keeps taking its reads; it must
    // have seen the standby up before the pause (a replica behind every position an instance
    // has sampled is lagging to it, whatever the bound).
    const olderConfig = loadConfig({ ...Object.fromEntries(Object.entries(config).map(([k, v]) => [k, String(v)])), ZONE_RULES_FILE: OLDER_RULES, REPLICA_MAX_LAG_MS: '600000' })
    const olderDatabase = openServerDatabase(config.DATABASE_URL!, olderConfig, { replicaUrls: [config.DATABASE_REPLICA_URLS] })
    await until('its replica is up', async () => olderDatabase.replicas()[0]!.status === 'up', 5000)
      .catch(async (error: Error) => { await olderDatabase.close(); throw new Error(`${error.message}: ${JSON.stringify(olderDatabase.replicas())}`) })
    await pauseReplay(control)
    const olderApp = await buildApp({ config: olderConfig, database: olderDatabase })
    t.teardown(() => olderApp.close())
    await olderApp.ready()
    t.equal(olderApp.database.replicas()[0]!.status, 'up', 'the paused standby is up to this instance')
    const onStandby = (await control.query<{ n: number }>('SELECT count(*)::int AS n FROM zone_rule_sets WHERE version = $1', ['2025b'])).rows[0]!.n
    t.equal(onStandby, 0, 'the paused standby lacks the rules')
    const changes: string[] = []
    const unwatch = olderApp.database.watchReplicas(state => { changes.push(`${state.status}:${state.reason ?? ''}`) })
    const res = await olderApp.inject({ url: `/api/jobs/${job.id}/analytics?tz=Asia/Kathmandu`, headers: tenant.auth })
    unwatch()
    t.equal(res.statusCode, 200, 'answered')
    t.equal(res.headers['tzdata-version'], '2025b')
    t.same(res.json().average_score_by_week, [{ week: '2026-01-05', count: 1, average_score: 80 }])
    // Only the primary has 2025b's rules: the answer's weeks are the primary's.
    t.same(changes.filter(change => !change.startsWith('up:')), [], `the standby stays in use: it is behind, not broken (${changes.join(' ')})`)
    t.equal(olderApp.database.replicas()[0]!.status, 'up')
    // A screen the paused standby has not replayed: a count without it came from the standby.
    const countOf = async (): Promise<number> => (await olderApp.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })).json().interview_count
    const before = await countOf()
    await createScreens(owner.prisma, job.id, [{ status: 'expired' }])
    t.equal(await countOf(), before, 'other reads still go to it')
    await control.query('SELECT pg_wal_replay_resume()')
    await until('the replica is back in use', async () => replicaState().status === 'up', 5000)
    figures.push('zone rules missing on the standby: the analytics read ran on the primary (200), the standby stayed up')
  })

  await t.test('a sync read on the replica: tokens from the standby\'s snapshots; a change it has not replayed comes in a later sync', async t => {
    const list = async (query: string): Promise<{ data: Array<{ id: string, title: string }>, sync_token: string | null }> => {
      const res = await app.inject({ url: `/api/jobs?${query}`, headers: tenant.auth })
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
      return res.json()
    }
    await writeAndReplay()
    // A standby's token counts every transaction from the oldest it knows in progress as not
    // seen (src/changes/point.ts): one in progress on the primary during the walk (a fold's,
    // every second) has a sync from it report the job again, as CI saw once. Walk until a sync
    // from the token has nothing to report.
    let walked = await list('limit=100')
    await until('a walk with nothing to report after it', async () => {
      if ((await list(`changed_since=${encodeURIComponent(walked.sync_token!)}`)).data.length === 0) return true
      walked = await list('limit=100')
      return false
    }, 5000)
    t.type(walked.sync_token, 'string', 'a walk on the standby ends with a token')
    const control = new pg.Client({ connectionString: pair.standbyUrl('screening') })
    await control.connect()
    t.teardown(() => control.end())
    await pauseReplay(control)
    await owner.prisma.$executeRaw`UPDATE jobs SET title = 'changed on the primary' WHERE id = ${job.id}::uuid`
    const early = await list(`changed_since=${encodeURIComponent(walked.sync_token!)}`)
    t.equal(replicaState().status, 'up', 'answered by the paused standby')
    t.same(early.data, [], 'the standby has not replayed the change: nothing to report yet')
    await control.query('SELECT pg_wal_replay_resume()')
    await until('the standby replayed the change', async () => (await control.query('SELECT title FROM jobs WHERE id = $1', [job.id])).rows[0]?.title === 'changed on the primary', 5000)
    await until('the replica is in use', async () => replicaState().status === 'up', 5000)
    const later = await list(`changed_since=${encodeURIComponent(early.sync_token!)}`)
    t.same(later.data.map(j => [j.id, j.title]), [[job.id, 'changed on the primary']], 'the token the standby made still leads to the change')

    // A standby's pg_current_snapshot() lists no transaction in progress: one open on the
    // primary while a later one commits must still count as not seen by a token made there.
    const other = await createJob(owner.prisma, tenant)
    const held = new pg.Client({ connectionString: pair.primaryUrl('screening') })
    await held.connect()
    t.teardown(() => held.end())
    await held.query('BEGIN')
    await held.query('UPDATE jobs SET title = $2 WHERE id = $1', [other.id, 'held open'])
    await owner.prisma.$executeRaw`UPDATE jobs SET description = 'committed after' WHERE id = ${job.id}::uuid`
    await until('the standby replayed the later transaction', async () => (await control.query('SELECT description FROM jobs WHERE id = $1', [job.id])).rows[0]?.description === 'committed after', 5000)
    await until('the replica is in use', async () => replicaState().status === 'up', 5000)
    const during = await list('limit=100')
    t.ok(during.data.some(j => j.id === other.id && j.title !== 'held open'), 'walked on the standby before the open transaction committed')
    await held.query('COMMIT')
    await until('the standby replayed the commit', async () => (await control.query('SELECT title FROM jobs WHERE id = $1', [other.id])).rows[0]?.title === 'held open', 5000)
    const after = await list(`changed_since=${encodeURIComponent(during.sync_token!)}`)
    t.ok(after.data.some(j => j.id === other.id && j.title === 'held open'), 'the transaction open during the walk is reported')
  })

  await t.test('a token ahead of the standby (made on the primary): the page is read on the primary; a token ahead of the primary: 410', async t => {
    await writeAndReplay()
    const later = await createJob(owner.prisma, tenant, { title: 'changed after the token' })
    await writeAndReplay()
    // An instance whose bound on lag keeps the paused standby in use (it sees it up first),
    // and one that reads the primary only, where the token is made.
    const patientConfig = loadConfig({ ...Object.fromEntries(Object.entries(config).map(([k, v]) => [k, String(v)])), REPLICA_MAX_LAG_MS: '600000' })
    const patientApp = await buildApp({ config: patientConfig, database: openServerDatabase(config.DATABASE_URL!, patientConfig, { replicaUrls: [config.DATABASE_REPLICA_URLS] }) })
    t.teardown(() => patientApp.close())
    await until('its replica is up', async () => patientApp.database.replicas()[0]!.status === 'up', 5000)
    const primaryApp = await buildApp({ config, database: openServerDatabase(config.DATABASE_URL!, config) })
    t.teardown(() => primaryApp.close())
    const control = new pg.Client({ connectionString: pair.standbyUrl('screening') })
    await control.connect()
    t.teardown(async () => { await control.query('SELECT pg_wal_replay_resume()').catch(() => {}); await control.end() })
    await pauseReplay(control)

    await owner.prisma.$executeRaw`UPDATE jobs SET title = 'seen by the token' WHERE id = ${job.id}::uuid`
    const walk = async (on: typeof app, query: string): Promise<{ statusCode: number, body: { data: Array<{ id: string, title: string }>, sync_token: string | null, code?: string } }> => {
      const res = await on.inject({ url: `/api/jobs?${query}`, headers: tenant.auth })
      return { statusCode: res.statusCode, body: res.json() }
    }
    const token = (await walk(primaryApp, 'limit=100')).body.sync_token!
    await owner.prisma.$executeRaw`UPDATE jobs SET title = 'changed after the token, on the primary' WHERE id = ${later.id}::uuid`
    const countOf = async (): Promise<number> => (await patientApp.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })).json().interview_count
    const before = await countOf()
    await createScreens(owner.prisma, job.id, [{ status: 'expired' }])
    t.equal(await countOf(), before, 'the paused standby takes this instance\'s reads (a screen it has not replayed is not counted)')

    const sync = await walk(patientApp, `changed_since=${encodeURIComponent(token)}`)
    t.equal(sync.statusCode, 200)
    t.same(sync.body.data.map(j => [j.id, j.title]).sort(), [[job.id, 'seen by the token'], [later.id, 'changed after the token, on the primary']].sort(),
      'the page came from the primary: it has the changes the standby has not replayed (a title, and a screen of the other job)')
    t.equal(patientApp.database.replicas()[0]!.status, 'up', 'the standby stays in use: behind the token, not broken')

    const { payload, sealed } = { payload: JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>, sealed: new SignedJson('x'.repeat(32)) }
    const xmax = BigInt(String(payload.x).split(':')[1]!)
    const ahead = sealed.seal({ ...payload, x: `${xmax + 1_000_000n}:${xmax + 1_000_000n}:` })
    const expired = await walk(patientApp, `changed_since=${encodeURIComponent(ahead)}`)
    t.equal(expired.statusCode, 410, 'a token ahead of the primary too (the database went back): 410, whichever server was asked first')
    t.equal(expired.body.code, 'sync_token_expired')
    await control.query('SELECT pg_wal_replay_resume()')
    await until('the replica is back in use', async () => replicaState().status === 'up', 5000)
    figures.push('a token ahead of the paused standby: its sync page read on the primary (the change after the token reported), the standby kept in use; a token ahead of the primary: 410')
  })

  await t.test('the replica stopped under load: every answer a 200, then reads return to it', async t => {
    await app.listen({ host: '127.0.0.1', port: 0 })
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
    const paths = [`/api/jobs/${job.id}`, `/api/jobs/${job.id}/analytics?tz=Asia/Kathmandu`, '/api/jobs?limit=5']
    const statuses = new Map<string, number>()
    let running = true
    const client = async (n: number): Promise<void> => {
      // eslint-disable-next-line no-unmodified-loop-condition -- set to false by the test body while the clients run
      for (let i = n; running; i++) {
        let status: string
        try {
          const res = await fetch(base + paths[i % paths.length]!, { headers: tenant.auth, signal: AbortSignal.timeout(10_000) })
          await res.arrayBuffer()
          status = String(res.status)
        } catch (error) {
          status = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
      }
    }
    const clients = Array.from({ length: 8 }, async (_, n) => { await client(n) })
    t.teardown(async () => { running = false; await Promise.all(clients) })
    await sleep(500)
    await pair.stopStandby()
    const downAfter = await until('the replica is seen down', async () => replicaState().status === 'down', 5000)
    await sleep(1000)
    await pair.startStandby()
    const restarted = performance.now()
    await until('the replica is up again', async () => replicaState().status === 'up', 10_000)
    const upAfter = performance.now() - restarted
    await sleep(500)
    running = false
    await Promise.all(clients)
    const counts = Object.fromEntries(statuses)
    const total = [...statuses.values()].reduce((a, b) => a + b, 0)
    t.same(Object.keys(counts), ['200'], `every answer a 200 through the outage: ${JSON.stringify(counts)}`)
    t.ok(total > 50, `under load: ${total} requests`)
    figures.push(`replica outage under load (8 clients): ${JSON.stringify(counts)} of ${total}; seen down ${downAfter.toFixed(0)} ms after the stop; in use again ${upAfter.toFixed(0)} ms after it restarted`)

    const control = new pg.Client({ connectionString: pair.standbyUrl('screening') })
    await control.connect()
    t.teardown(() => control.end())
    for (let i = 0; i < 20; i++) await interviews()
    const sessions = (await control.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'screening-read-api:replica' AND datname = 'screening'")).rows[0]!.n
    t.ok(sessions > 0, 'reads reach the restarted replica again')
  })
})
