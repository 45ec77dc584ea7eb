// The stack test's clients, through the proxy, until SIGTERM or SIGINT (at most 300 s):
// keep-alive connections and connections opened anew for every request, cycling
// over jobs, their analytics and the list, with each of the keys given. Prints the counts by
// status and exits 1 on any failed request: a status other than 200, 304, 403 or 404, a
// connection error or a timeout.
//   STACK_URL=http://127.0.0.1:3000 STACK_KEYS=k1,k2 STACK_JOBS=id1,id2 node load.mjs PHASE
import http from 'node:http'

const phase = process.argv[2] ?? 'load'
const url = process.env.STACK_URL ?? 'http://127.0.0.1:3000'
const keys = (process.env.STACK_KEYS ?? '').split(',').filter(Boolean)
const jobs = (process.env.STACK_JOBS ?? '').split(',').filter(Boolean)
if (keys.length === 0 || jobs.length === 0) throw new Error('set STACK_KEYS and STACK_JOBS')
const ok = new Set([200, 304, 403, 404])
const timeoutS = 10
const maxMs = 300_000

const requests = keys.flatMap(key => {
  const headers = { authorization: `Bearer ${key}` }
  return jobs.flatMap(id => [
    { method: 'GET', path: `/api/jobs/${id}`, headers },
    { method: 'GET', path: `/api/jobs/${id}/analytics?tz=Europe/Paris`, headers },
    { method: 'GET', path: '/api/jobs?limit=20', headers },
  ])
})

// `workers` clients, each sending its next request when the last one is answered, over
// `agent`: keep-alive (a pooled connection reused, as browsers and SDKs do) or none (a new
// connection for every request, Connection: close). Not autocannon: it reconnects silently
// when a server closes a keep-alive connection, dropping the request without counting it.
function clients (workers, agent) {
  const result = { statusCodeStats: {}, errors: 0, timeouts: 0, reused: 0 }
  const state = { stopped: false }
  const one = request => new Promise(resolve => {
    let settled = false
    const settle = status => {
      if (settled) return
      settled = true
      if (status === undefined) result.errors++
      else result.statusCodeStats[status] = { count: (result.statusCodeStats[status]?.count ?? 0) + 1 }
      resolve()
    }
    const req = http.get(new URL(request.path, url), { agent, headers: request.headers, timeout: timeoutS * 1000 }, res => {
      res.on('error', () => settle())
      res.on('end', () => settle(res.statusCode))
      res.resume()
    })
    req.on('socket', () => { if (req.reusedSocket) result.reused++ })
    req.on('timeout', () => { result.timeouts++; req.destroy(new Error('timeout')) })
    req.on('error', () => settle())
  })
  const worker = async offset => {
    for (let i = offset; !state.stopped; i++) await one(requests[i % requests.length])
  }
  const timer = setTimeout(() => { state.stopped = true }, maxMs)
  const done = Promise.all(Array.from({ length: workers }, (_, i) => worker(i))).then(() => { clearTimeout(timer); if (agent !== false) agent.destroy(); return result })
  return { stop: () => { state.stopped = true }, done }
}

const runs = { 'keep-alive': clients(4, new http.Agent({ keepAlive: true, maxSockets: 4 })), 'new connections': clients(2, false) }
const stop = () => { for (const run of Object.values(runs)) run.stop() }
process.once('SIGTERM', stop)
process.once('SIGINT', stop)

let failed = 0
let total = 0
for (const [name, run] of Object.entries(runs)) {
  const result = await run.done
  const byStatus = Object.entries(result.statusCodeStats).map(([code, { count }]) => [Number(code), Number(count)])
  const bad = byStatus.filter(([code]) => !ok.has(code)).reduce((sum, [, count]) => sum + count, 0) + result.errors
  const done = byStatus.reduce((sum, [, count]) => sum + count, 0) + result.errors
  failed += bad
  total += done
  console.log(`${phase}: ${name}: ${done} requests (${byStatus.map(([code, count]) => `${code}: ${count}`).join(', ')}), ${result.errors} connection errors (${result.timeouts} of them timeouts), ${result.reused} on a reused connection; ${bad} failed`)
}
console.log(`${phase}: ${total} requests, ${failed} failed`)
process.exitCode = failed === 0 ? 0 : 1
