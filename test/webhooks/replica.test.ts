import pg from 'pg'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { TEST_WEBHOOK_SECRET_KEY } from '../helpers/app.js'
import { productionDatabase, serverUrl } from '../helpers/database.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { replicationTools, startReplicatedPair } from '../helpers/replication.js'
import { until } from '../helpers/until.js'
import { startReceiver } from '../helpers/webhook-receiver.js'
import { makeEndpoint } from '../helpers/webhooks.js'
import { sleep } from '../helpers/sleep.js'

// Webhooks with DATABASE_REPLICA_URLS (issue 41, review): a partner told of a change reads
// the job when told, and that read may go to a replica. A delivery waits until the replicas
// taking reads have replayed its change, or until one that has not is lagging (its reads
// then go to the primary). A primary and a streaming standby of our own; replay paused.

const tools = replicationTools()
const skip = serverUrl === undefined
  ? 'needs TEST_DATABASE_URL: the server suite has PostgreSQL\'s server tools'
  : 'missing' in tools ? tools.missing : false
const MAX_LAG_MS = 3000
const CHECK_MS = 200

t.test('a change is told once the replicas taking reads have it, or no longer take reads', { skip }, async t => {
  if ('missing' in tools) return
  const pair = await startReplicatedPair(tools.bindir)
  t.teardown(pair.close)
  const owner = await productionDatabase(t, db => pair.primaryUrl(db))
  const asApi = (url: string): string => url.replace('postgres@', 'screening_api@')

  const config = loadConfig({
    LOG_LEVEL: 'silent',
    AUTH_CACHE_TTL_MS: '0',
    DATABASE_URL: asApi(pair.primaryUrl('screening')),
    DATABASE_REPLICA_URLS: asApi(pair.standbyUrl('screening')),
    REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
    REPLICA_CHECK_INTERVAL_MS: String(CHECK_MS),
    CURSOR_SECRET: 'x'.repeat(32),
    WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY,
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
    WEBHOOK_DISPATCH_INTERVAL_MS: '50',
  })
  const database = openServerDatabase(config.DATABASE_URL!, config, { replicaUrls: [config.DATABASE_REPLICA_URLS] })
  const app = await buildApp({ config, database })
  t.teardown(() => app.close())
  const tenant = await createTenant(owner.prisma, { plan: 'pro' })
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  await makeEndpoint(app, tenant, receiver.url)
  const job = await createJob(owner.prisma, tenant, { title: 'before' })
  const title = async (): Promise<string> => (await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })).json().title as string
  await until('the replica is up', async () => app.database.replicas()[0]!.status === 'up', 10_000)
  t.ok(await receiver.until(r => r.some(x => x.jobId === job.id), 10_000), 'the job\'s creation told (replay running)')
  await until('the replica has the job', async () => (await app.inject({ url: `/api/jobs/${job.id}`, headers: tenant.auth })).statusCode === 200, 5000)

  const control = new pg.Client({ connectionString: pair.standbyUrl('screening') })
  await control.connect()
  t.teardown(() => control.end())
  await control.query('SELECT pg_wal_replay_pause()')
  await until('replay is paused', async () => (await control.query<{ state: string }>('SELECT pg_get_wal_replay_pause_state() AS state')).rows[0]!.state === 'paused', 5000)

  const told = (): number => receiver.received.filter(x => x.jobId === job.id).length
  await owner.prisma.$executeRaw`UPDATE jobs SET title = 'after' WHERE id = ${job.id}::uuid`
  const changedAt = Date.now()
  await sleep(1500)
  t.equal(app.database.replicas()[0]!.status, 'up', 'the paused replica still takes reads (its lag under REPLICA_MAX_LAG_MS)')
  t.equal(await title(), 'before', 'and a read there does not show the change')
  t.equal(told(), 1, 'so the change is not told yet')
  t.ok(await receiver.until(() => told() >= 2, 10_000), 'told once the replica lags past REPLICA_MAX_LAG_MS')
  const waited = receiver.received.filter(x => x.jobId === job.id)[1]!.at - changedAt
  t.ok(waited >= MAX_LAG_MS - 500, `after ${waited} ms`)
  t.equal(app.database.replicas()[0]!.status, 'lagging', 'the replica no longer takes reads')
  t.equal(await title(), 'after', 'a read now, as the partner makes when told, shows the change')

  await control.query('SELECT pg_wal_replay_resume()')
  await until('the replica is up again', async () => app.database.replicas()[0]!.status === 'up', 10_000)
  await owner.prisma.$executeRaw`UPDATE jobs SET title = 'again' WHERE id = ${job.id}::uuid`
  t.ok(await receiver.until(() => told() >= 3, 5000), 'with replay running, a change is told at once')
  t.equal(await title(), 'again', 'and read on the replica as told')
})
