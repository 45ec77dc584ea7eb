import { Writable } from 'node:stream'
import pg from 'pg'
import t, { type Test } from 'tap'
import { revokeApiKey } from '../../src/admin/commands.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { HEARTBEAT_MS, listenOnServer, proofLifetimeMs } from '../../src/db/listen.js'
import { TEST_WEBHOOK_SECRET_KEY } from '../helpers/app.js'
import { API_ROLE, createTestDatabase, serverUrl } from '../helpers/database.js'
import { createTenant, type Tenant } from '../helpers/fixtures.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { sleep } from '../helpers/sleep.js'
import { within } from '../helpers/until.js'

// The caller cache's listener proves that it hears (src/db/listen.ts): notifications that
// never arrive turn the cache off, so a revoked key is refused within seconds, not within
// AUTH_CACHE_TTL_MS (an hour here, so that the difference cannot be missed). Where they never
// arrive: another database on the same server (NOTIFY is per database), standing in for a
// transaction-mode pooler, from the start; and a proxy that starts dropping PostgreSQL's
// notification messages while still answering queries, mid-life. Each proof lasts BOUND_MS
// from its probe's sending (issue 35), whether the next probe comes back, cannot be sent
// (the probe's path frozen) or waits in a busy pool. Figures: from the revocation's commit
// to the last request answered from the cache (its start) and to the first 401.

const skip = serverUrl === undefined ? 'needs TEST_DATABASE_URL: LISTEN needs a server connection' : false
const HOUR = 3_600_000
const TIMEOUT_MS = 2000 // DB_CONNECTION_TIMEOUT_MS, the bound on a probe's round trip
/** The stated bound (docs/operations.md): a change not heard is served from a cache for less than this. */
const BOUND_MS = proofLifetimeMs(TIMEOUT_MS)
/** What a request adds on a loaded 2-core machine: the cache is consulted in its first hook. */
const REQUEST_SLACK_MS = 250
/** The bound, plus slack for a loaded machine, for the first 401 (which needs a lookup). */
const DEAF_BOUND_MS = BOUND_MS + 1000
const FAST_BOUND_MS = 1000
const TOKEN = 'metrics-token-metrics-token'

const figures: string[] = []
t.teardown(() => { if (figures.length > 0) console.log(`# listener figures: ${figures.join('; ')}`) })

const db = skip === false ? await createTestDatabase() : undefined
t.teardown(async () => { await db?.close() })

type App = Awaited<ReturnType<typeof buildApp>>

/** An app whose listener connects to `listenUrl`, with its log lines. */
async function appListeningOn (t: Test, listenUrl: string, env: Record<string, string> = {}, primaryUrl = db!.apiUrl!): Promise<{ app: App, logs: Array<Record<string, unknown>> }> {
  const logs: Array<Record<string, unknown>> = []
  const logStream = new Writable({ write (chunk: Buffer, _encoding, done) { for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>); done() } })
  // Configured as an instance is (its webhook key too, else the app warns that it is unset).
  const config = loadConfig({ LOG_LEVEL: 'info', AUTH_CACHE_TTL_MS: String(HOUR), RATE_LIMIT_MAX: '1000000', DB_CONNECTION_TIMEOUT_MS: String(TIMEOUT_MS), METRICS_TOKEN: TOKEN, WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY, ...env })
  const app = await buildApp({ config, database: openServerDatabase(primaryUrl, config, { listenUrl }), logStream })
  t.teardown(async () => { await app.close() })
  await app.ready()
  return { app, logs }
}

/** Milliseconds until `url` answers `status`, asking again and again; fails past `boundMs`. */
async function until (t: Test, app: App, tenant: Tenant, status: number, boundMs: number): Promise<number> {
  const started = performance.now()
  let last = 0
  if (!await within(async () => (last = (await app.inject({ url: '/api/me', headers: tenant.auth })).statusCode) === status, boundMs, 5)) t.fail(`still ${last} after ${boundMs} ms, expected ${status}`)
  return performance.now() - started
}

async function waitFor (condition: () => boolean, limitMs: number): Promise<number> {
  const started = performance.now()
  await within(condition, limitMs, 10)
  return performance.now() - started
}

interface Revocation { last200: number | undefined, firstOther: { ms: number, status: number } | undefined, first401: number | undefined }

/**
 * Asks for `tenant`'s revoked key again and again, one request at a time, from `revokedAt`
 * on: when the last 200 started, and when the first other answer and the first 401 came.
 * `meanwhile` runs after each answer (a test restores a path there). Stops at the first 401
 * or past `limitMs`.
 */
async function afterRevocation (app: App, tenant: Tenant, revokedAt: number, limitMs: number, meanwhile: (seen: Revocation) => Promise<void> = async () => {}): Promise<Revocation> {
  const seen: Revocation = { last200: undefined, firstOther: undefined, first401: undefined }
  while (performance.now() - revokedAt < limitMs) {
    const started = performance.now() - revokedAt
    const res = await app.inject({ url: '/api/me', headers: tenant.auth })
    const answered = performance.now() - revokedAt
    if (res.statusCode === 200) seen.last200 = started
    else seen.firstOther ??= { ms: answered, status: res.statusCode }
    if (res.statusCode === 401) { seen.first401 = answered; break }
    await meanwhile(seen)
    await sleep(20)
  }
  return seen
}

/**
 * Resolves shortly after a probe of `app`'s listener has been notified (seen by a LISTEN of
 * our own, straight to the database; 200 ms for the app's listener to hear it too): a
 * revocation made then is the worst case, nearly the whole proof of that probe still ahead.
 */
async function justAfterAProbe (): Promise<void> {
  const watcher = new pg.Client({ connectionString: db!.url! })
  await watcher.connect()
  try {
    await watcher.query('LISTEN caller_changed')
    await new Promise<void>(resolve => { watcher.on('notification', message => { if (message.payload?.startsWith('listener-probe:') === true) resolve() }) })
  } finally {
    await watcher.end()
  }
  await sleep(200)
}

const seconds = (ms: number | undefined): string => ms === undefined ? 'none' : `${(ms / 1000).toFixed(2)} s`

async function warm (t: Test, app: App, tenant: Tenant): Promise<void> {
  for (let i = 0; i < 2; i++) t.equal((await app.inject({ url: '/api/me', headers: tenant.auth })).statusCode, 200, 'the key works')
}

const metric = async (app: App, line: string): Promise<number | undefined> => {
  const text = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body
  const found = text.split('\n').find(l => l.startsWith(`${line} `))
  return found === undefined ? undefined : Number(found.slice(line.length + 1))
}

const offWarnings = (logs: Array<Record<string, unknown>>, reason: string): number =>
  logs.filter(l => l.level === 40 && l.reason === reason && String(l.msg).startsWith('caller cache off')).length

/** The database TEST_DATABASE_URL names, as the API's role: the same server, not the app's database. */
const otherDatabase = (): string => {
  const url = new URL(serverUrl!)
  url.username = API_ROLE
  url.password = ''
  return url.toString()
}

t.test('a listener pointed where notifications never arrive: the cache is off, a revoked key is refused at once', { skip }, async t => {
  const { app, logs } = await appListeningOn(t, otherDatabase())
  t.notOk(app.callerCache.enabled, 'connected and LISTENing, but its probe never came back: off')
  t.equal(app.callerCache.offReason, 'no_echo')
  t.equal(await metric(app, 'caller_cache_enabled'), 0, '/metrics: caller_cache_enabled 0')
  t.equal(await metric(app, 'caller_cache_off_reason{reason="no_echo"}'), 1, '/metrics: the reason')

  const tenant = await createTenant(db!.prisma)
  await warm(t, app, tenant)
  // After the first query: Prisma's start-up on a loaded machine can exceed readiness's 1 s.
  const ready = await app.inject({ url: '/health/ready', headers: { authorization: `Bearer ${TOKEN}` } })
  t.match(ready.json(), { status: 'ok', caller_cache: { status: 'off', reason: 'no_echo' } }, `readiness detail: off, still ready (${ready.statusCode} ${ready.body})`)
  t.equal(app.callerCache.stats.hits, 0, 'nothing served from the cache')
  t.ok(await revokeApiKey(db!.prisma, { id: tenant.apiKeyId }))
  const ms = await until(t, app, tenant, 401, FAST_BOUND_MS)
  figures.push(`listener on another database (cannot hear): revoked key refused ${ms.toFixed(1)} ms after the revocation (cache off from start-up)`)

  // Long enough for the listener to have given up and reconnected at least once.
  await sleep(2 * TIMEOUT_MS + 1000)
  t.notOk(app.callerCache.enabled, 'still off')
  t.equal(offWarnings(logs, 'no_echo'), 1, 'one warning for the one change of state, not one per retry')
})

t.test('a listener pointed at the database: on, and a revocation is seen as fast as before', { skip }, async t => {
  const { app, logs } = await appListeningOn(t, db!.apiUrl!)
  t.ok(app.callerCache.enabled)
  t.equal(app.callerCache.offReason, null)
  t.equal(await metric(app, 'caller_cache_enabled'), 1)
  const tenant = await createTenant(db!.prisma)
  await warm(t, app, tenant)
  t.match((await app.inject({ url: '/health/ready', headers: { authorization: `Bearer ${TOKEN}` } })).json(), { caller_cache: { status: 'on', reason: null } })
  t.ok(app.callerCache.stats.hits > 0, 'the key was served from the cache')
  await revokeApiKey(db!.prisma, { id: tenant.apiKeyId })
  figures.push(`listener on the database (hears): revoked key refused ${(await until(t, app, tenant, 401, FAST_BOUND_MS)).toFixed(1)} ms after the revocation`)
  // Probes (its own, every HEARTBEAT_MS) do not clear the cache: only changes do.
  const other = await createTenant(db!.prisma)
  await warm(t, app, other)
  const invalidations = app.callerCache.stats.invalidations
  await sleep(HEARTBEAT_MS + 500)
  t.equal(app.callerCache.stats.invalidations, invalidations, 'a heartbeat went by without clearing the cache')
  t.equal(logs.filter(l => l.level === 40).length, 0, 'no warning')
})

t.test('notifications lost mid-life (a pooler in the way): off within the bound, back on when they flow again', { skip }, async t => {
  const proxy = await TcpProxy.before(db!.apiUrl!)
  t.teardown(async () => { await proxy.close() })
  const { app, logs } = await appListeningOn(t, proxy.url)
  t.ok(app.callerCache.enabled, 'on through the proxy')
  const tenant = await createTenant(db!.prisma)
  await warm(t, app, tenant)

  proxy.muteNotifications()
  await revokeApiKey(db!.prisma, { id: tenant.apiKeyId })
  // The revocation's notification is lost: the key works from the cache until the next probe
  // fails to come back, then the cache is off and the key is looked up.
  const ms = await until(t, app, tenant, 401, DEAF_BOUND_MS)
  t.notOk(app.callerCache.enabled)
  t.equal(app.callerCache.offReason, 'no_echo')
  t.equal(offWarnings(logs, 'no_echo'), 1, 'a warning, with the reason')
  figures.push(`notifications lost mid-life: revoked key refused ${ms.toFixed(0)} ms after the revocation (bound: heartbeat ${HEARTBEAT_MS} + probe ${TIMEOUT_MS} = ${BOUND_MS} ms; AUTH_CACHE_TTL_MS ${HOUR})`)

  proxy.muteNotifications(false)
  const back = await waitFor(() => app.callerCache.enabled, 15_000)
  t.ok(app.callerCache.enabled, 'on again once notifications flow')
  t.equal(logs.filter(l => l.level === 30 && String(l.msg).startsWith('caller cache on')).length, 1, 'and says so')
  figures.push(`back on ${back.toFixed(0)} ms after notifications flowed again`)
  const next = await createTenant(db!.prisma)
  await warm(t, app, next)
  await revokeApiKey(db!.prisma, { id: next.apiKeyId })
  figures.push(`then a revocation seen after ${(await until(t, app, next, 401, FAST_BOUND_MS)).toFixed(1)} ms`)
})

// What the issue found: with the listener deaf and the probe's path down, a probe that could
// not be sent left the cache on, and a revoked key answered 200 for the whole
// AUTH_CACHE_TTL_MS (116 s of 120 s). Now the last proof lapses at its deadline all the same.
t.test('notifications dropped and the probe\'s path frozen: the revoked key is served from the cache for less than the bound, refused once the path is back', { skip }, async t => {
  const listening = await TcpProxy.before(db!.apiUrl!)
  t.teardown(async () => { await listening.close() })
  const primary = await TcpProxy.before(db!.apiUrl!)
  t.teardown(async () => { await primary.close() })
  const { app, logs } = await appListeningOn(t, listening.url, {}, primary.url)
  t.ok(app.callerCache.enabled, 'on')
  const tenant = await createTenant(db!.prisma)
  await warm(t, app, tenant)

  await justAfterAProbe()
  listening.muteNotifications()
  primary.freeze()
  await revokeApiKey(db!.prisma, { id: tenant.apiKeyId })
  const revokedAt = performance.now()
  let restoredAt: number | undefined
  const seen = await afterRevocation(app, tenant, revokedAt, BOUND_MS + 30_000, async seen => {
    // The path comes back once the cache is off (no answer from the cache, a 503 instead):
    // the listener still does not hear, so the key must now be looked up and refused.
    if (seen.firstOther !== undefined && restoredAt === undefined) { await primary.restore(); restoredAt = performance.now() - revokedAt }
  })
  t.ok(seen.last200 !== undefined && seen.last200 < BOUND_MS + REQUEST_SLACK_MS, `the last 200 went to a request started ${seconds(seen.last200)} after the revocation: within the bound (${BOUND_MS} ms)`)
  t.equal(seen.firstOther?.status, 503, `then no answer from the cache: ${seen.firstOther?.status} at ${seconds(seen.firstOther?.ms)} (the primary frozen)`)
  t.ok(seen.first401 !== undefined, `refused once the path is back: 401 at ${seconds(seen.first401)}`)
  t.notOk(app.callerCache.enabled, 'the cache is off')
  await waitFor(() => app.callerCache.offReason === 'no_echo', HEARTBEAT_MS + TIMEOUT_MS + 1000)
  t.equal(app.callerCache.offReason, 'no_echo', 'the path back, probes are sent and not heard')
  t.notOk(app.callerCache.enabled, 'and it stays off')
  // no_probe when the last proof lapsed with the next probe stuck; no_echo if the app's
  // listener missed the probe seen above (muted first) and the next one was sent and lost.
  const off = logs.find(l => l.level === 40 && String(l.msg).startsWith('caller cache off'))
  t.ok(off !== undefined, `off was logged (reason ${String(off?.reason)})`)
  figures.push(`notifications dropped and the probe's path frozen (worst phase): last 200 to a request started ${seconds(seen.last200)} after the revocation (bound ${BOUND_MS} ms), off logged with ${String(off?.reason)}, then ${seen.firstOther?.status} at ${seconds(seen.firstOther?.ms)}; path restored at ${seconds(restoredAt)}, 401 at ${seconds(seen.first401)}`)
})

t.test('notifications dropped and the probes stalled on their way, other statements passing: the revoked key is refused within the bound', { skip }, async t => {
  const listening = await TcpProxy.before(db!.apiUrl!)
  t.teardown(async () => { await listening.close() })
  const primary = await TcpProxy.before(db!.apiUrl!)
  t.teardown(async () => { await primary.close() })
  const { app } = await appListeningOn(t, listening.url, {}, primary.url)
  const tenant = await createTenant(db!.prisma)
  await warm(t, app, tenant)

  await justAfterAProbe()
  listening.muteNotifications()
  primary.stallStatementsWith('pg_notify')
  await revokeApiKey(db!.prisma, { id: tenant.apiKeyId })
  const revokedAt = performance.now()
  const seen = await afterRevocation(app, tenant, revokedAt, BOUND_MS + 10_000)
  t.ok(seen.last200 !== undefined && seen.last200 < BOUND_MS + REQUEST_SLACK_MS, `the last 200 went to a request started ${seconds(seen.last200)} after the revocation: within the bound (${BOUND_MS} ms)`)
  t.ok(seen.first401 !== undefined && seen.first401 < BOUND_MS + 1000, `refused at ${seconds(seen.first401)}`)
  t.equal(seen.firstOther?.status, 401, 'nothing else in between: the lookups pass')
  t.equal(app.callerCache.offReason, 'no_probe')
  figures.push(`notifications dropped and the probes stalled (worst phase): last 200 to a request started ${seconds(seen.last200)} after the revocation (bound ${BOUND_MS} ms), first 401 at ${seconds(seen.first401)}`)
  await primary.restore()
})

t.test('notifications dropped, the primary\'s pool busy but working: on while busy; the revoked key served from the cache for less than the bound', { skip }, async t => {
  const listening = await TcpProxy.before(db!.apiUrl!)
  t.teardown(async () => { await listening.close() })
  const { app } = await appListeningOn(t, listening.url, { DB_POOL_MAX: '2' })
  const tenant = await createTenant(db!.prisma)
  await warm(t, app, tenant)
  // Ten loops of 0.3 s statements on two connections: every statement of the app, the
  // probes and the lookups included, waits about 1.5 s for a connection.
  let busy = true
  const waits: number[] = []
  const loops = Array.from({ length: 10 }, async () => {
    // eslint-disable-next-line no-unmodified-loop-condition -- set to false by the test body while the loops run
    while (busy) {
      const queued = performance.now()
      await app.database.prisma.$queryRaw`SELECT 1`.catch(() => {})
      waits.push(performance.now() - queued)
      await app.database.prisma.$queryRaw`SELECT pg_sleep(0.3)`.catch(() => {})
    }
  })
  t.teardown(async () => { busy = false; await Promise.all(loops) })
  await sleep(2 * HEARTBEAT_MS)
  t.ok(app.callerCache.enabled, 'still on after two heartbeats of a busy pool: its probes come back, late')
  const hits = app.callerCache.stats.hits
  t.equal((await app.inject({ url: '/api/me', headers: tenant.auth })).statusCode, 200)
  t.ok(app.callerCache.stats.hits > hits, 'served from the cache')

  await justAfterAProbe()
  listening.muteNotifications()
  await revokeApiKey(db!.prisma, { id: tenant.apiKeyId })
  const revokedAt = performance.now()
  const seen = await afterRevocation(app, tenant, revokedAt, BOUND_MS + 10_000)
  busy = false
  await Promise.all(loops)
  const wait = waits.sort((x, y) => x - y)[Math.floor(waits.length / 2)] ?? NaN
  t.ok(seen.last200 !== undefined && seen.last200 < BOUND_MS + REQUEST_SLACK_MS, `the last 200 went to a request started ${seconds(seen.last200)} after the revocation: within the bound (${BOUND_MS} ms)`)
  t.ok(seen.first401 !== undefined && seen.first401 < BOUND_MS + TIMEOUT_MS + REQUEST_SLACK_MS, `refused at ${seconds(seen.first401)}: the bound, then one lookup in the busy pool (a connection within DB_CONNECTION_TIMEOUT_MS)`)
  figures.push(`notifications dropped, pool busy (median wait for a connection ${seconds(wait)}; worst phase): last 200 to a request started ${seconds(seen.last200)} after the revocation (bound ${BOUND_MS} ms), first 401 at ${seconds(seen.first401)}`)
})

t.test('a probe that cannot be sent (DATABASE_URL\'s path down) proves nothing: off at the bound though the listener hears; on again once probes come back', { skip }, async t => {
  const proxy = await TcpProxy.before(db!.apiUrl!)
  t.teardown(async () => { await proxy.close() })
  const { app, logs } = await appListeningOn(t, db!.apiUrl!, {}, proxy.url)
  t.ok(app.callerCache.enabled, 'on: probes go through the proxy, the listener connects directly')
  proxy.refuse()
  proxy.cut()
  const off = await waitFor(() => !app.callerCache.enabled, BOUND_MS + 1000)
  t.notOk(app.callerCache.enabled, `off ${off.toFixed(0)} ms after the path went down (bound ${BOUND_MS} ms from the last probe heard)`)
  t.ok(off < BOUND_MS + REQUEST_SLACK_MS, 'within the bound')
  t.equal(app.callerCache.offReason, 'no_probe')
  // The cache is off by the clock; the listener's timer that logs it may run a little later.
  await waitFor(() => logs.some(l => l.level === 40 && l.reason === 'no_probe'), 1000)
  t.equal(logs.filter(l => l.level === 40 && l.reason === 'no_probe').length, 1, 'a warning, with the reason')
  const invalidations = app.callerCache.stats.invalidations
  const tenant = await createTenant(db!.prisma)
  await revokeApiKey(db!.prisma, { id: tenant.apiKeyId })
  await waitFor(() => app.callerCache.stats.invalidations > invalidations, FAST_BOUND_MS)
  t.ok(app.callerCache.stats.invalidations > invalidations, 'the listener still hears what is notified meanwhile')
  await proxy.restore()
  const back = await waitFor(() => app.callerCache.enabled, HEARTBEAT_MS + TIMEOUT_MS + 1000)
  t.ok(app.callerCache.enabled, 'on again once a probe comes back')
  figures.push(`probe's path down, listener hearing: off (no_probe) ${off.toFixed(0)} ms after the path went down, on again ${back.toFixed(0)} ms after it came back`)
})

t.test('a change made with triggers off is not heard: served until AUTH_CACHE_TTL_MS, unless the operator notifies', { skip }, async t => {
  const ttl = 2000
  const { app } = await appListeningOn(t, db!.apiUrl!, { AUTH_CACHE_TTL_MS: String(ttl) })
  // What a logical-replication subscriber's apply worker does: it runs with replica role.
  const revokeWithTriggersOff = async (tenant: Tenant): Promise<void> => {
    await db!.prisma.$transaction([
      db!.prisma.$executeRawUnsafe('SET LOCAL session_replication_role = replica'),
      db!.prisma.apiKey.update({ where: { id: tenant.apiKeyId }, data: { revokedAt: new Date() } }),
    ])
  }

  const left = await createTenant(db!.prisma)
  await warm(t, app, left)
  const cachedAt = performance.now()
  await revokeWithTriggersOff(left)
  t.equal((await app.inject({ url: '/api/me', headers: left.auth })).statusCode, 200, 'still served from the cache: nothing was notified')
  t.ok(app.callerCache.enabled, 'and the listener, which hears, cannot know')
  await until(t, app, left, 401, ttl + 1000)
  figures.push(`triggers off, nothing done: revoked key refused ${(performance.now() - cachedAt).toFixed(0)} ms after the caller was cached (AUTH_CACHE_TTL_MS ${ttl})`)

  const notified = await createTenant(db!.prisma)
  await warm(t, app, notified)
  await revokeWithTriggersOff(notified)
  t.equal((await app.inject({ url: '/api/me', headers: notified.auth })).statusCode, 200)
  await db!.prisma.$executeRaw`SELECT pg_notify('caller_changed', 'operator')`
  figures.push(`triggers off, then the operator's pg_notify: refused after ${(await until(t, app, notified, 401, FAST_BOUND_MS)).toFixed(1)} ms`)

  // ENABLE ALWAYS: the trigger fires in replica role too (a subscriber's apply, not a restore
  // with --disable-triggers, which disables every trigger).
  await db!.prisma.$executeRawUnsafe('ALTER TABLE api_keys ENABLE ALWAYS TRIGGER api_keys_caller_change')
  const always = await createTenant(db!.prisma)
  await warm(t, app, always)
  await revokeWithTriggersOff(always)
  figures.push(`replica role with the trigger ENABLE ALWAYS: refused after ${(await until(t, app, always, 401, FAST_BOUND_MS)).toFixed(1)} ms`)
})

// Closing does not wait for a probe under way: it goes through the application's pool and
// is bounded by the query timeout, which a frozen database runs out; a stop would add it.
t.test('closing does not wait for a probe under way', { skip }, async t => {
  let probes = 0
  const subscription = await listenOnServer(db!.url!, 'listener_close_test', { onNotification: () => {}, onHeard: () => {}, onState: () => {} }, {
    timeoutMs: TIMEOUT_MS,
    heartbeatMs: 50,
    // The first probe is answered (by a real NOTIFY); the next never is, like one sent to a frozen database.
    probe: async payload => {
      if (++probes > 1) return await new Promise<void>(() => {})
      await db!.prisma.$executeRaw`SELECT pg_notify('listener_close_test', ${payload})`
    },
  })
  // eslint-disable-next-line no-unmodified-loop-condition -- counted by the probe while the listener runs
  while (probes < 2) await sleep(10)
  const started = Date.now()
  const closed = await Promise.race([subscription.close().then(() => true), sleep(TIMEOUT_MS).then(() => false)])
  const closedAfter = Date.now() - started
  t.ok(closed && closedAfter < TIMEOUT_MS / 2, `closed in ${closedAfter} ms with a probe under way`)
})

// While the instance stops (draining), no probe is sent: one sent then holds the pool's close
// for its timeout. LISTEN goes on and the state stands until the last proof lapses, as it
// would with probes that fail; probing resumes if asked to.
t.test('no probe while probing is off; the state stands until the last proof lapses', { skip }, async t => {
  let probes = 0
  let probing = true
  const states: Array<[boolean, string | undefined]> = []
  const subscription = await listenOnServer(db!.url!, 'listener_pause_test', { onNotification: () => {}, onHeard: () => {}, onState: (listening, reason) => { states.push([listening, reason]) }, probing: () => probing }, {
    timeoutMs: TIMEOUT_MS,
    heartbeatMs: 50,
    probe: async payload => { probes++; await db!.prisma.$executeRaw`SELECT pg_notify('listener_pause_test', ${payload})` },
  })
  t.teardown(async () => { await subscription.close() })
  // eslint-disable-next-line no-unmodified-loop-condition -- counted by the probe while the listener runs
  while (probes < 2) await sleep(10)
  probing = false
  await sleep(100)
  const paused = probes
  await sleep(500)
  t.equal(probes, paused, 'none sent in 10 heartbeats with probing off')
  t.same(states, [[true, undefined]], 'listening, as before: the last proof has not lapsed (50 ms + 2 s)')
  await waitFor(() => states.length > 1, TIMEOUT_MS + 1000)
  t.same(states, [[true, undefined], [false, 'no_probe']], 'then off: nothing shows it hears')
  probing = true
  await waitFor(() => states.length > 2, 1000)
  t.ok(probes > paused, 'probing resumes')
  t.same(states.at(-1), [true, undefined], 'and the first probe back turns it on')
})
