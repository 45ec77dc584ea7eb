// npm run bench:plugins: what each cross-cutting plugin of the service costs per request.
// A ladder of servers (bench/plugins/server.ts), each with one plugin more than the last,
// answering a constant Job body; autocannon in a process of its own; rounds interleaved
// over the rungs; medians. Cost of a rung = its time per request (1/throughput) minus the
// previous rung's. Needs Redis at REDIS_URL (default 127.0.0.1:6379) for the last rung.
import { median } from '../report.js'
import { measure } from '../load.js'
import { freePort, startChild, waitForOk } from '../processes.js'
import { nodeBinary } from '../servers.js'
import { cleanUp, cleanUpOnSignals } from '../cleanup.js'
import { RUNGS } from './server.js'

cleanUpOnSignals()
const rounds = Number(process.env.ROUNDS ?? 3)
const seconds = Number(process.env.SECONDS ?? 5)
const node = nodeBinary()
const rates: number[][] = RUNGS.map(() => [])
try {
  for (let round = 1; round <= rounds; round++) {
    for (const [rung, name] of RUNGS.entries()) {
      const port = await freePort()
      const child = startChild(name, node.path, ['--import', 'tsx', 'bench/plugins/server.ts'], { env: { ...process.env, PLUGINS: String(rung), HOST: '127.0.0.1', PORT: String(port) } })
      const url = `http://127.0.0.1:${port}`
      await waitForOk(child, `${url}/job`)
      await measure(node, url, [{ path: '/job' }], { seconds: 1, connections: 16, headers: {} })
      const m = await measure(node, url, [{ path: '/job' }], { seconds, connections: 16, headers: {} })
      if (m.bad > 0) throw new Error(`${name}: ${m.bad} bad answers`)
      rates[rung]!.push(m.requestsPerSecond)
      console.log(`  [${round}/${rounds}] ${name.padEnd(34)} ${m.requestsPerSecond.toFixed(0).padStart(7)} req/s`)
      await child.stop()
    }
  }
  console.log(`\nplugin cost per request, node ${node.version}, ${rounds} rounds of ${seconds} s, 16 connections, medians`)
  console.log(`${'rung'.padEnd(34)} ${'req/s'.padStart(8)} ${'µs/request'.padStart(11)} ${'added µs'.padStart(9)}`)
  let previous: number | undefined
  for (const [rung, name] of RUNGS.entries()) {
    const rate = median(rates[rung]!)
    const micros = 1e6 / rate
    console.log(`${name.padEnd(34)} ${rate.toFixed(0).padStart(8)} ${micros.toFixed(1).padStart(11)} ${previous === undefined ? '–'.padStart(9) : (micros - previous).toFixed(1).padStart(9)}`)
    previous = micros
  }
} finally {
  await cleanUp()
}
