// npm run soak -- [minutes=10] [requests per second=200]: the server on a PostgreSQL server
// database (demo data), under a steady rate of get-job, analytics and list calls from
// autocannon in a separate process. Prints latency percentiles, errors and status counts,
// and the heap after a forced GC at the start and the end (a leak shows as growth).
// Needs TEST_DATABASE_URL (a throwaway database is made beside it). Not part of CI.
import { spawn } from 'node:child_process'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { seedDemoData } from '../src/demo/seed.js'
import { apiDatabase } from '../test/helpers/app.js'
import { createTestDatabase, serverUrl } from '../test/helpers/database.js'

const gc = (globalThis as { gc?: () => void }).gc
if (serverUrl === undefined || gc === undefined) {
  console.error('usage: TEST_DATABASE_URL=postgresql://…/db node --expose-gc --import tsx bench/soak.ts [minutes] [rate]   (npm run soak does the flags)')
  process.exit(2)
}
const minutes = Number(process.argv[2] ?? 10)
const rate = Number(process.argv[3] ?? 200)

const db = await createTestDatabase()
const demo = await seedDemoData(db.prisma)
const config = loadConfig({ LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000', DATABASE_URL: db.apiUrl! })
// As production runs: the API role, the configured pool and timeouts.
const app = await buildApp({ config, database: apiDatabase(db, config) })
await app.listen({ host: '127.0.0.1', port: 0 })
const address = app.server.address()
const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
const heap = (): number => { gc!(); gc!(); return process.memoryUsage().heapUsed / 1024 / 1024 }
const heapStart = heap()

const pro = demo.credentials.find(c => c.plan === 'pro')!.key
const requests = [
  { path: `/api/jobs/${demo.sampleJobId}` },
  { path: `/api/jobs/${demo.sampleJobId}/analytics?tz=Europe/Berlin` },
  { path: '/api/jobs?limit=20' },
]
const options = { url: base, connections: 20, overallRate: rate, duration: minutes * 60, headers: { authorization: `Bearer ${pro}` }, requests }
const child = spawn(process.execPath, ['--import', 'tsx', new URL('./load-generator.ts', import.meta.url).pathname, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] })
let out = ''
child.stdout.on('data', (c: Buffer) => { out += c.toString() })
await new Promise(resolve => child.once('exit', resolve))
const result = JSON.parse(out) as { latency: Record<string, number>, requests: { total: number, average: number }, errors: number, timeouts: number, non2xx: number, statusCodeStats?: Record<string, { count: number }> }
const heapEnd = heap()
await app.close()
await db.close()

console.log(`soak: ${minutes} min at ${rate} req/s, 20 connections, get-job / analytics / list in turn`)
console.log(`  requests ${result.requests.total} (${result.requests.average.toFixed(0)}/s), errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx}`)
console.log(`  latency p50 ${result.latency.p50} ms, p90 ${result.latency.p90} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`)
console.log(`  status codes ${JSON.stringify(Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([k, v]) => [k, v.count])))}`)
console.log(`  heap after forced GC: start ${heapStart.toFixed(1)} MiB, end ${heapEnd.toFixed(1)} MiB`)
