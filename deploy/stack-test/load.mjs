// The stack test's clients, through the proxy, until SIGTERM or SIGINT (at most --max 300 s):
// keep-alive connections and connections opened anew for every request, cycling over a job,
// its analytics and the list, with each of the keys given. Prints the counts by status and
// exits 1 on any failed request: a status other than 200, 304, 403 or 404, a connection
// error or a timeout.
//   STACK_URL=http://127.0.0.1:3000 STACK_KEYS=k1,k2 STACK_JOBS=id1,id2 node load.mjs PHASE
import autocannon from 'autocannon'

const phase = process.argv[2] ?? 'load'
const url = process.env.STACK_URL ?? 'http://127.0.0.1:3000'
const keys = (process.env.STACK_KEYS ?? '').split(',').filter(Boolean)
const jobs = (process.env.STACK_JOBS ?? '').split(',').filter(Boolean)
if (keys.length === 0 || jobs.length === 0) throw new Error('set STACK_KEYS and STACK_JOBS')
const ok = new Set([200, 304, 403, 404])

const requests = keys.flatMap(key => {
  const headers = { authorization: `Bearer ${key}` }
  return jobs.flatMap(id => [
    { method: 'GET', path: `/api/jobs/${id}`, headers },
    { method: 'GET', path: `/api/jobs/${id}/analytics?tz=Europe/Paris`, headers },
    { method: 'GET', path: '/api/jobs?limit=20', headers },
  ])
})
const common = { url, requests, duration: 300, timeout: 10 }
const runs = {
  'keep-alive': autocannon({ ...common, connections: 4 }),
  // reconnectRate 1: a new connection for every request.
  'new connections': autocannon({ ...common, connections: 2, reconnectRate: 1 }),
}

const stop = () => { for (const run of Object.values(runs)) run.stop() }
process.once('SIGTERM', stop)
process.once('SIGINT', stop)

let failed = 0
let total = 0
for (const [name, run] of Object.entries(runs)) {
  const result = await new Promise(resolve => run.once('done', resolve))
  const byStatus = Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [Number(code), Number(count)])
  const bad = byStatus.filter(([code]) => !ok.has(code)).reduce((sum, [, count]) => sum + count, 0) + result.errors
  const done = byStatus.reduce((sum, [, count]) => sum + count, 0) + result.errors
  failed += bad
  total += done
  console.log(`${phase}: ${name}: ${done} requests (${byStatus.map(([code, count]) => `${code}: ${count}`).join(', ')}), ${result.errors} connection errors (${result.timeouts} of them timeouts); ${bad} failed`)
}
console.log(`${phase}: ${total} requests, ${failed} failed`)
process.exitCode = failed === 0 ? 0 : 1
