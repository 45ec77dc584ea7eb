// The webhooks bench's floor (bench/webhooks.ts), a process of its own: what telling every
// endpoint of every change costs with nothing else, no log read, no queue, no record. For
// `seconds`, `rate` changes a second, each POSTed at once to each of `endpoints` endpoints of
// the receiver, signed as the service signs (Standard Webhooks) and sent through undici as its
// egress guard sends. On stdout as JSON: requests sent and answered, from each change's due
// time to its answer p50 and p95, and this process's CPU. Options as JSON on stdin.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Agent, request } from 'undici'
import { signatureHeader, signingKeys, newSigningSecret } from '../src/webhooks/signing.js'

/** `inFlight`: per endpoint, as WEBHOOK_ENDPOINT_CONCURRENCY caps the service's (one origin here, so one pool). */
interface Options { url: string, endpoints: number, inFlight: number, rate: number, seconds: number }
let input = ''
for await (const chunk of process.stdin) input += String(chunk)
const options = JSON.parse(input) as Options
const keys = signingKeys([newSigningSecret()])
const agent = new Agent({ connections: options.endpoints * options.inFlight })
const cpuMs = (): number => {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number)
  return (fields[11]! + fields[12]!) * 10
}

async function post (endpoint: number): Promise<boolean> {
  const id = `msg_${randomUUID()}`
  const body = JSON.stringify({ type: 'job.updated', timestamp: new Date().toISOString(), data: { id: randomUUID() } })
  const timestamp = Math.floor(Date.now() / 1000)
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(keys, id, timestamp, body), 'content-type': 'application/json' }
  const response = await request(`${options.url}/e${endpoint}`, { method: 'POST', dispatcher: agent, headers, body })
  await response.body.dump()
  return response.statusCode >= 200 && response.statusCode < 300
}

const latencies: number[] = []
let answered = 0
const pending: Array<Promise<void>> = []
const cpuBefore = cpuMs()
const started = Date.now()
// Paced every 10 ms: the changes due by then, each to every endpoint at once.
for (let sent = 0; ;) {
  const due = Math.floor((Date.now() - started) * options.rate / 1000)
  if (Date.now() - started >= options.seconds * 1000) break
  for (; sent < due; sent++) {
    const dueAt = started + sent * 1000 / options.rate
    for (let e = 0; e < options.endpoints; e++) {
      pending.push(post(e).then(ok => { if (ok) answered++; latencies.push(Date.now() - dueAt) }, () => {}))
    }
  }
  await new Promise(resolve => setTimeout(resolve, 10))
}
await Promise.all(pending)
latencies.sort((a, b) => a - b)
const at = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN
process.stdout.write(JSON.stringify({ requests: pending.length, answered, seconds: (Date.now() - started) / 1000, p50: at(0.5), p95: at(0.95), cpuMs: cpuMs() - cpuBefore }))
await agent.close()
