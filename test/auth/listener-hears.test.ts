import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { revokeApiKey } from '../../src/admin/commands.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openServerDatabase } from '../../src/db/database.js'
import { HEARTBEAT_MS, listenOnServer } from '../../src/db/listen.js'
import { API_ROLE, createTestDatabase, serverUrl } from '../helpers/database.js'
import { createTenant, type Tenant } from '../helpers/fixtures.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'

// The caller cache's listener proves that it hears (src/db/listen.ts): notifications that
// never arrive turn the cache off, so a revoked key is refused within seconds, not within
// AUTH_CACHE_TTL_MS (an hour here, so that the difference cannot be missed). Where they never
// arrive: another database on the same server (NOTIFY is per database), standing in for a
// transaction-mode pooler, from the start; and a proxy that starts dropping PostgreSQL's
// notification messages while still answering queries, mid-life. Figures: milliseconds from
// the revocation's commit to the first 401.

const skip = serverUrl === undefined ? 'needs TEST_DATABASE_URL: LISTEN needs a server connection' : false
const HOUR = 3_600_000
const TIMEOUT_MS = 2000 // DB_CONNECTION_TIMEOUT_MS, the bound on a probe's round trip
/** The stated bound (docs/operations.md), plus slack for a loaded machine. */
const DEAF_BOUND_MS = HEARTBEAT_MS + TIMEOUT_MS + 1000
const FAST_BOUND_MS = 1000
const TOKEN = 'metrics-token-metrics-token'
const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

const figures: string[] = []
t.teardown(() => { if (figures.length > 0) console.log(`# listener figures: ${figures.join('; ')}`) })

const db = skip === false ? await createTestDatabase() : undefined
t.teardown(async () => { await db?.close() })

type App = Awaited<ReturnType<typeof buildApp>>

/** An app whose listener connects to `listenUrl`, with its log lines. */
async function appListeningOn (t: Test, listenUrl: string, env: Record<string, string> = {}, primaryUrl = db!.apiUrl!): Promise<{ app: App, logs: Array<Record<string, unknown>> }> {
  const logs: Array<Record<string, unknown>> = []
  const logStream = new Writable({ write (chunk: Buffer, _encoding, done) { for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>); done() } })
  const config = loadConfig({ LOG_LEVEL: 'info', AUTH_CACHE_TTL_MS: String(HOUR), RATE_LIMIT_MAX: '1000000', DB_CONNECTION_TIMEOUT_MS: String(TIMEOUT_MS), METRICS_TOKEN: TOKEN, ...env })
  const app = await buildApp({ config, database: openServerDatabase(primaryUrl, config, { listenUrl }), logStream })
  t.teardown(async () => { await app.close() })
  await app.ready()
  return { app, logs }
}

/** Milliseconds until `url` answers `status`, asking again and again; fails past `boundMs`. */
async function until (t: Test, app: App, tenant: Tenant, status: number, boundMs: number): Promise<number> {
  const started = performance.now()
  for (;;) {
    const res = await app.inject({ url: '/api/me', headers: tenant.auth })
    const elapsed = performance.now() - started
    if (res.statusCode === status) return elapsed
    if (elapsed > boundMs) { t.fail(`still ${res.statusCode} after ${boundMs} ms, expected ${status}`); return elapsed }
    await sleep(5)
  }
}

async function waitFor (condition: () => boolean, limitMs: number): Promise<number> {
  const started = performance.now()
  while (!condition() && performance.now() - started < limitMs) await sleep(10)
  return performance.now() - started
}

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
  figures.push(`notifications lost mid-life: revoked key refused ${ms.toFixed(0)} ms after the revocation (bound: heartbeat ${HEARTBEAT_MS} + probe ${TIMEOUT_MS} ms; AUTH_CACHE_TTL_MS ${HOUR})`)

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

t.test('a probe that cannot be sent (DATABASE_URL\'s path down) proves nothing: the state stands', { skip }, async t => {
  const proxy = await TcpProxy.before(db!.apiUrl!)
  t.teardown(async () => { await proxy.close() })
  const { app, logs } = await appListeningOn(t, db!.apiUrl!, {}, proxy.url)
  t.ok(app.callerCache.enabled, 'on: probes go through the proxy, the listener connects directly')
  proxy.refuse()
  proxy.cut()
  await sleep(HEARTBEAT_MS + TIMEOUT_MS + 1000)
  t.ok(app.callerCache.enabled, 'still on: the listener was not shown deaf, and still hears')
  const invalidations = app.callerCache.stats.invalidations
  const tenant = await createTenant(db!.prisma)
  await revokeApiKey(db!.prisma, { id: tenant.apiKeyId })
  await waitFor(() => app.callerCache.stats.invalidations > invalidations, FAST_BOUND_MS)
  t.ok(app.callerCache.stats.invalidations > invalidations, 'a change made meanwhile is heard')
  t.equal(offWarnings(logs, 'no_echo'), 0, 'no warning')
  await proxy.restore()
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
  const subscription = await listenOnServer(db!.url!, 'listener_close_test', { onNotification: () => {}, onState: () => {} }, {
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
// for its timeout. LISTEN goes on and the state stands; probing resumes if asked to.
t.test('no probe while probing is off; the state stands', { skip }, async t => {
  let probes = 0
  let probing = true
  const states: boolean[] = []
  const subscription = await listenOnServer(db!.url!, 'listener_pause_test', { onNotification: () => {}, onState: listening => { states.push(listening) }, probing: () => probing }, {
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
  t.same(states, [true], 'listening, as before')
  probing = true
  await sleep(500)
  t.ok(probes > paused, 'probing resumes')
})
