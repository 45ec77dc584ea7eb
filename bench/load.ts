// One measurement: autocannon in a process of its own (bench/load-generator.ts), so that it
// shares neither the CPU thread nor the heap of the bench or of a server.
import { once } from 'node:events'
import { join } from 'node:path'
import type autocannon from 'autocannon'
import { startChild } from './processes.js'
import type { LoadRequest } from './scenarios.js'
import type { NodeBinary } from './servers.js'

const GENERATOR = join(import.meta.dirname, 'load-generator.ts')

export interface Measurement {
  requestsPerSecond: number
  /** Milliseconds, as autocannon records them (whole milliseconds). */
  p50: number
  p99: number
  /** Mean latency in milliseconds, not rounded: finer than p50 where requests take a few ms. */
  mean: number
  total: number
  /** Answers other than 2xx/3xx, socket errors and timeouts: any makes the figure suspect. */
  bad: number
  statusCodes: Record<string, number>
  errors: number
  timeouts: number
  /** CPU ms per request of the server process and of PostgreSQL (Linux; bench/cpu.ts). */
  cpuMsPerRequest?: { server: number, database: number }
}

export interface LoadSettings { seconds: number, connections: number, headers: Record<string, string> }

export async function measure (node: NodeBinary, url: string, requests: LoadRequest[], settings: LoadSettings): Promise<Measurement> {
  const options: autocannon.Options = {
    url,
    connections: settings.connections,
    duration: settings.seconds,
    headers: settings.headers,
    requests: requests.map(r => ({ method: 'GET', path: r.path, ...(r.headers !== undefined ? { headers: r.headers } : {}) })),
  }
  const child = startChild('load generator', node.path, ['--import', 'tsx', GENERATOR, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.process.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const [code] = await once(child.process, 'exit') as [number | null]
  await child.stop()
  if (code !== 0) throw new Error(`load generator exited with code ${code}`)
  const result = JSON.parse(out) as autocannon.Result
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count ?? 0]))
  const badStatuses = Object.entries(statusCodes).filter(([code]) => !/^[23]\d\d$/.test(code)).reduce((sum, [, n]) => sum + n, 0)
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.average,
    total: result.requests.total,
    bad: badStatuses + result.errors + result.timeouts,
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
  }
}
