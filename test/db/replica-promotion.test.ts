import { Writable } from 'node:stream'
import pg from 'pg'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { productionDatabase, serverUrl } from '../helpers/database.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'
import { replicationTools, startReplicatedPair } from '../helpers/replication.js'
import { until } from '../helpers/until.js'
import { sleep } from '../helpers/sleep.js'

// A replica that stopped being one: a primary and two streaming standbys made with
// PostgreSQL's own tools (test/helpers/replication.ts). The first standby is promoted
// (pg_promote()) while the app reads from it, and the primary keeps taking writes: reads
// must leave it within one check interval, with the reason in the log, /metrics and
// readiness. Then, as after a failover, the promoted standby is the primary and the second
// standby still replays the old primary's timeline: it is not used either.

const tools = replicationTools()
const skip = serverUrl === undefined
  ? 'needs TEST_DATABASE_URL: the server suite has PostgreSQL\'s server tools'
  : 'missing' in tools ? tools.missing : false
const CHECK_MS = 500
const TOKEN = 'metrics-token-metrics-token'

t.test('a promoted replica takes no reads from the next check on; one on another timeline none at all', { skip }, async t => {
  if ('missing' in tools) return
  const pair = await startReplicatedPair(tools.bindir, { standbys: 2 })
  t.teardown(pair.close)
  const figures: string[] = []
  t.teardown(() => { console.log(`# figures: replica promotion: ${figures.join('; ')}`) })

  const owner = await productionDatabase(t, db => pair.primaryUrl(db))
  const asApi = (url: string): string => url.replace('postgres@', 'screening_api@')

  const tenant = await createTenant(owner.prisma, { plan: 'pro' })
  const job = await createJob(owner.prisma, tenant, { questions: 2 })
  await createScreens(owner.prisma, job.id, [{ status: 'completed', score: 80, completedAt: new Date('2026-01-05T10:00:00Z') }, { status: 'in_progress' }])
  for (const index of [0, 1]) {
    const standby = new pg.Client({ connectionString: pair.standbyUrl('screening', index) })
    await until(`standby ${index + 1} has the data`, async () => {
      await standby.connect().catch(() => {})
      return (await standby.query('SELECT count(*)::int AS n FROM screens').catch(() => ({ rows: [{ n: 0 }] }))).rows[0].n === 2
    }, 10_000, 5)
    await standby.end()
  }

  const logs: Array<Record<string, unknown>> = []
  const logStream = new Writable({ write (chunk: Buffer, _encoding, done) { for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>); done() } })
  const replicaLogs = (): Array<Record<string, unknown>> => logs.filter(l => typeof l.replica === 'string')
  const appOn = async (primary: string, replica: string) => {
    const config = loadConfig({
      LOG_LEVEL: 'info',
      RATE_LIMIT_MAX: '1000000',
      AUTH_CACHE_TTL_MS: '0',
      DATABASE_URL: asApi(primary),
      DATABASE_REPLICA_URLS: asApi(replica),
      REPLICA_MAX_LAG_MS: '60000',
      REPLICA_CHECK_INTERVAL_MS: String(CHECK_MS),
      CURSOR_SECRET: 'x'.repeat(32),
      METRICS_TOKEN: TOKEN,
    })
    const app = await buildApp({ config, database: openServerDatabase(config.DATABASE_URL!, config, { replicaUrls: [config.DATABASE_REPLICA_URLS] }), logStream })
    t.teardown(() => app.close())
    return app
  }
  type App = Awaited<ReturnType<typeof appOn>>
  const interviews = async (app: App): Promise<number> => {
    const res = await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    return (res.json() as { interview_count: number }).interview_count
  }
  const scrape = async (app: App): Promise<string> => (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body

  const app = await appOn(pair.primaryUrl('screening'), pair.standbyUrl('screening', 0))
  const replicaName = app.database.replicas()[0]!.name
  await until('the replica is up', async () => app.database.replicas()[0]!.status === 'up', 5000, 5)
  t.match(replicaLogs(), [{ level: 40, replica: replicaName, previous: 'unknown', status: 'up', reason: null }], 'its first state, logged at warn')
  const control = new pg.Client({ connectionString: pair.standbyUrl('screening', 0) })
  await control.connect()
  t.teardown(() => control.end())
  for (let i = 0; i < 5; i++) t.equal(await interviews(app), 2)
  const sessions = async (): Promise<number> => (await control.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'screening-read-api:replica' AND datname = 'screening'")).rows[0]!.n
  t.ok(await sessions() > 0, 'reads reach the standby')

  await t.test('promoted while in use: reads leave it within one check interval', async t => {
    const promoting = performance.now()
    t.same((await control.query<{ promoted: boolean }>('SELECT pg_promote() AS promoted')).rows, [{ promoted: true }])
    const promoted = performance.now()
    t.same((await control.query('SELECT pg_is_in_recovery() AS standby')).rows, [{ standby: false }], 'a primary now: it takes writes of its own')
    // The old primary goes on taking writes that the promoted copy never gets.
    await createScreens(owner.prisma, job.id, [{ status: 'expired' }])
    const left = await until('reads leave the promoted replica', async () => await interviews(app) === 3, 10 * CHECK_MS, 5)
    const leftAfter = performance.now() - promoted
    t.ok(leftAfter <= CHECK_MS + 250, `reads left it ${leftAfter.toFixed(0)} ms after the promotion: within one check interval (${CHECK_MS} ms) and the check's own time`)
    t.match(app.database.replicas()[0], { status: 'down', reason: 'not_in_recovery' })
    for (let i = 0; i < 10; i++) t.equal(await interviews(app), 3, 'and they stay off it')
    figures.push(`pg_promote() took ${(promoted - promoting).toFixed(0)} ms; reads left the promoted replica ${leftAfter.toFixed(0)} ms after it returned (${left.toFixed(0)} ms after the write on the primary), REPLICA_CHECK_INTERVAL_MS ${CHECK_MS}`)

    t.match(replicaLogs().at(-1), { level: 40, replica: replicaName, previous: 'up', status: 'down', reason: 'not_in_recovery' }, 'logged at warn, with the reason')
    t.equal(replicaLogs().length, 2, 'one line a change of state, not one a check')
    const text = await scrape(app)
    t.ok(text.includes(`db_replica_status{replica="${replicaName}",status="down"} 1`), '/metrics: down')
    t.ok(text.includes(`db_replica_down_reason{replica="${replicaName}",reason="not_in_recovery"} 1`), '/metrics: why')
    t.ok(text.includes(`db_replica_up{replica="${replicaName}"} 0`))
    t.match((await app.inject({ url: '/health/ready', headers: { authorization: `Bearer ${TOKEN}` } })).json(), { status: 'ok', databases: { primary: 'up', replicas: [{ name: replicaName, status: 'down', reason: 'not_in_recovery' }] } }, 'readiness: down, why; still ready on the primary')
  })

  await t.test('after the failover, a standby still on the old primary\'s timeline is not used', async t => {
    // The promoted standby is the primary now; the second standby still replays the old
    // primary, which took a write the new one never had: its copy has diverged.
    const failedOver = await appOn(pair.standbyUrl('screening', 0), pair.standbyUrl('screening', 1))
    const name = failedOver.database.replicas()[0]!.name
    await until('the second standby is checked', async () => failedOver.database.replicas()[0]!.status !== 'unknown', 5000, 5)
    t.match(failedOver.database.replicas()[0], { status: 'down', reason: 'timeline' })
    const second = new pg.Client({ connectionString: pair.standbyUrl('screening', 1) })
    await second.connect()
    t.teardown(() => second.end())
    await until('the second standby has the old primary\'s write', async () => (await second.query<{ n: number }>('SELECT count(*)::int AS n FROM screens')).rows[0]!.n === 3, 5000, 5)
    t.same((await second.query('SELECT pg_is_in_recovery() AS standby')).rows, [{ standby: true }], 'it is a standby, replaying')
    for (let i = 0; i < 5; i++) t.equal(await interviews(failedOver), 2, 'reads come from the new primary, not from the diverged copy')
    await sleep(3 * CHECK_MS)
    t.match(failedOver.database.replicas()[0], { status: 'down', reason: 'timeline' }, 'and it stays out')
    t.ok((await scrape(failedOver)).includes(`db_replica_down_reason{replica="${name}",reason="timeline"} 1`), '/metrics: why')
    t.match(logs.filter(l => l.replica === name), [{ level: 40, previous: 'unknown', status: 'down', reason: 'timeline' }], 'logged at warn, once')
  })
})
