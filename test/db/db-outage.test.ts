import type { AddressInfo } from 'node:net'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { apiDatabase } from '../helpers/app.js'
import { createTestDatabase, serverUrl } from '../helpers/database.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { sleep } from '../helpers/sleep.js'

// The real PostgreSQL server behind a TCP proxy that the test steers, the app listening on
// a real port, and 20 clients calling it without pause. Three faults in turn: a blip
// (every connection cut, the server still there), an outage (cut, and new connections
// refused) and a freeze (nothing passes, sockets stay open). Through
// all of them: only 200 and 503, every answer within REQUEST_TIMEOUT_MS + 0.5 s, no
// unhandled rejection; and within 5 s of the database coming back, 99% of requests are 200.

const CLIENTS = 20
const SLACK_MS = 500
const RECOVERY_MS = 5000

interface Outcome { started: number, ended: number, status: number | string }

t.test('database faults under load: 503 within bounds, then recovery without a restart', { skip: serverUrl === undefined ? 'needs TEST_DATABASE_URL (faults of a PostgreSQL server over TCP)' : false }, async t => {
  const db = await createTestDatabase()
  t.teardown(() => db.close())
  const tenant = await createTenant(db.prisma, { plan: 'pro' })
  const job = await createJob(db.prisma, tenant, { questions: 3 })
  await createScreens(db.prisma, job.id, Array.from({ length: 50 }, (_, i) => i % 2 === 0
    ? { status: 'completed' as const, score: i, completedAt: new Date(Date.UTC(2026, 0, 1 + i)) }
    : { status: 'in_progress' as const }))

  const proxy = await TcpProxy.before(db.apiUrl!)
  t.teardown(() => proxy.close())
  // A request bound under the default query timeout (5 s): it must hold by itself.
  const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000', REQUEST_TIMEOUT_MS: '2000' })
  const bound = config.REQUEST_TIMEOUT_MS
  const app = await buildApp({ config, database: apiDatabase({ ...db, apiUrl: proxy.url }, config) })
  t.teardown(() => app.close())
  // The server's own time for each answer (the clients' includes their share of this process).
  let slowestServerMs = 0
  app.addHook('onResponse', async (_request, reply) => { slowestServerMs = Math.max(slowestServerMs, reply.elapsedTime) })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason) }
  process.on('unhandledRejection', onUnhandled)
  t.teardown(() => { process.off('unhandledRejection', onUnhandled) })

  const outcomes: Outcome[] = []
  const paths = [`/api/jobs/${job.id}`, `/api/jobs/${job.id}/analytics?tz=Europe/Berlin`, '/api/jobs', '/api/me']
  let running = true
  const client = async (n: number): Promise<void> => {
    // eslint-disable-next-line no-unmodified-loop-condition -- set to false by the test body while the clients run
    for (let i = n; running; i++) {
      const started = performance.now()
      let status: Outcome['status']
      try {
        const res = await fetch(base + paths[i % paths.length]!, { headers: tenant.auth, signal: AbortSignal.timeout(bound * 3) })
        await res.arrayBuffer()
        status = res.status
      } catch (error) {
        status = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name
      }
      outcomes.push({ started, ended: performance.now(), status })
    }
  }
  const clients = Array.from({ length: CLIENTS }, (_, n) => client(n))
  const stopClients = async (): Promise<void> => { running = false; await Promise.all(clients) }
  // Runs before the app closes (teardowns run last in, first out), whatever failed.
  t.teardown(stopClients)
  const ready = async (): Promise<number> => (await fetch(`${base}/health/ready`)).status

  /** Time from `since` to the first response matching, or Infinity within `limitMs`. */
  async function firstAfter (since: number, match: (o: Outcome) => boolean, limitMs: number): Promise<number> {
    while (performance.now() - since < limitMs) {
      const found = outcomes.find(o => o.ended >= since && match(o))
      if (found !== undefined) return found.ended - since
      await sleep(10)
    }
    return Infinity
  }

  /** After the database is back at `back`: observe to back + 6 s; the last failure, and the share of 200s from back + 5 s. */
  async function recovery (back: number): Promise<{ lastFailureMs: number, okAfter: number, after: number }> {
    await sleep(back + RECOVERY_MS + 1000 - performance.now())
    const since = outcomes.filter(o => o.ended >= back)
    const failures = since.filter(o => o.status !== 200)
    const after = since.filter(o => o.started >= back + RECOVERY_MS)
    return {
      lastFailureMs: failures.length === 0 ? 0 : Math.max(...failures.map(o => o.ended)) - back,
      okAfter: after.filter(o => o.status === 200).length,
      after: after.length,
    }
  }

  const figures: string[] = []
  function checkRecovery (name: string, r: { lastFailureMs: number, okAfter: number, after: number }): void {
    t.ok(r.after >= CLIENTS, `${name}: ${r.after} requests from ${RECOVERY_MS} ms after the database came back`)
    t.ok(r.okAfter >= 0.99 * r.after, `${name}: ${r.okAfter}/${r.after} of them are 200 (>= 99%)`)
    t.ok(r.lastFailureMs <= RECOVERY_MS, `${name}: last failure ${r.lastFailureMs.toFixed(0)} ms after the database came back`)
    figures.push(`${name} recovery ${r.lastFailureMs.toFixed(0)} ms (last non-200 after the database came back), then ${r.okAfter}/${r.after} 200`)
  }

  await sleep(1000)
  t.ok(outcomes.length > 0 && outcomes.every(o => o.status === 200), `warm-up: ${outcomes.length} requests, all 200`)

  // A blip: every connection reset, the server still there.
  const blip = performance.now()
  proxy.cut()
  checkRecovery('blip', await recovery(blip))

  // An outage: connections cut and refused for 2 s.
  const outage = performance.now()
  proxy.cut()
  proxy.refuse()
  const first503 = await firstAfter(outage, o => o.status === 503, 5000)
  t.ok(first503 <= 1000, `first 503 ${first503.toFixed(0)} ms after the outage began (<= 1000)`)
  t.equal(await ready(), 503, 'not ready during the outage')
  await sleep(outage + 2000 - performance.now())
  const outageEnd = performance.now()
  await proxy.restore()
  checkRecovery('outage', await recovery(outageEnd))
  t.equal(await ready(), 200, 'ready again')
  figures.unshift(`first 503 ${first503.toFixed(0)} ms after an outage began`)

  // A freeze longer than the bound: nothing passes, nothing is closed.
  const freeze = performance.now()
  proxy.freeze()
  t.equal(await ready(), 503, 'not ready during the freeze')
  await sleep(freeze + bound + 1500 - performance.now())
  const thaw = performance.now()
  await proxy.restore()
  const afterThaw = await recovery(thaw) // also waits for the requests still in flight at the thaw
  const during = outcomes.filter(o => o.ended > freeze && o.started < thaw)
  const slowest = Math.max(...during.map(o => o.ended - o.started))
  t.ok(slowest <= bound + SLACK_MS, `freeze: ${during.length} requests in flight, the slowest answered in ${slowest.toFixed(0)} ms (<= ${bound} + ${SLACK_MS})`)
  t.ok(during.some(o => o.status === 503), 'requests during the freeze get 503')
  figures.push(`freeze of ${(thaw - freeze).toFixed(0)} ms: ${during.length} requests, slowest ${slowest.toFixed(0)} ms (bound ${bound} ms)`)
  checkRecovery('freeze', afterThaw)

  await stopClients()
  const statuses: Record<string, number> = {}
  for (const o of outcomes) statuses[o.status] = (statuses[o.status] ?? 0) + 1
  const slowestOverall = Math.max(...outcomes.map(o => o.ended - o.started))
  t.same(Object.keys(statuses).filter(s => s !== '200' && s !== '503'), [], `only 200 and 503: ${JSON.stringify(statuses)}`)
  t.ok(slowestOverall <= bound + SLACK_MS, `no request took longer than ${bound} + ${SLACK_MS} ms (slowest ${slowestOverall.toFixed(0)} ms)`)
  t.ok(slowestServerMs <= bound + SLACK_MS, `nor by the server's clock (slowest ${slowestServerMs.toFixed(0)} ms)`)
  t.equal(unhandled.length, 0, 'no unhandled rejection')
  t.ok(app.server.listening, 'the server is still up')
  t.comment(`db fault figures: ${figures.join('; ')}; ${outcomes.length} requests from ${CLIENTS} clients, statuses ${JSON.stringify(statuses)}, slowest answer ${slowestOverall.toFixed(0)} ms (server: ${slowestServerMs.toFixed(0)} ms), ${statuses['500'] ?? 0} × 500, ${unhandled.length} unhandled rejections`)
})
