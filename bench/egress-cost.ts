// What the egress guard's POST costs in CPU beyond the bare undici request the webhooks
// bench's floor sends (bench/webhook-floor-sender.ts): the same signed event to a receiver in
// a process of its own on 127.0.0.1, 40 in flight (10 endpoints, 4 each), interleaved rounds,
// this process's CPU per request, medians (docs/webhooks-design.md, "Cost").
//   npm run bench:egress [-- --rounds 25 --requests 10000]
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { EgressGuard } from '../src/webhooks/egress.js'
import { eventBody } from '../src/webhooks/events.js'
import { newSigningSecret, signatureHeader, signingKeys } from '../src/webhooks/signing.js'

const { values } = parseArgs({ options: { rounds: { type: 'string' }, requests: { type: 'string' } } })
const ROUNDS = Number(values.rounds ?? 25)
const REQUESTS = Number(values.requests ?? 10_000)
const IN_FLIGHT = 40

const receiver = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'webhook-receiver.ts'), '/dev/null'], { stdio: ['ignore', 'pipe', 'inherit'] })
const [portLine] = await once(receiver.stdout, 'data') as [Buffer]
const base = `http://127.0.0.1:${String(portLine).trim()}`
const keys = signingKeys([newSigningSecret()])
const guard = new EgressGuard(['127.0.0.1/32'])
const bare = new Agent({ connections: IN_FLIGHT })

/** The same event, signed the same way, for either sender. */
function signed (): { body: string, headers: Record<string, string> } {
  const event = { id: `msg_${randomUUID()}`, type: 'job.updated' as const, subject: randomUUID(), at: new Date().toISOString(), attempt: 1 }
  const body = eventBody(event)
  const timestamp = Math.floor(Date.now() / 1000)
  return { body, headers: { 'webhook-id': event.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(keys, event.id, timestamp, body) } }
}

const senders: Record<string, (i: number) => Promise<void>> = {
  'bare undici (the floor)': async i => {
    const { body, headers } = signed()
    const response = await request(`${base}/e${i % 10}`, { method: 'POST', dispatcher: bare, headers: { ...headers, 'content-type': 'application/json' }, body })
    await response.body.dump()
  },
  'the egress guard': async i => {
    const { body, headers } = signed()
    const result = await guard.post(`${base}/e${i % 10}`, headers, body, 15_000)
    if (result.status !== 204) throw new Error(`the receiver answered ${result.status ?? result.error}`)
  },
}

/** CPU of this process per request, in µs, for `REQUESTS` requests `IN_FLIGHT` at a time. */
async function round (send: (i: number) => Promise<void>): Promise<number> {
  const before = process.cpuUsage()
  let next = 0
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => { while (next < REQUESTS) await send(next++) }))
  const used = process.cpuUsage(before)
  return (used.user + used.system) / REQUESTS
}

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2 }
const runs: Record<string, number[]> = Object.fromEntries(Object.keys(senders).map(name => [name, []]))
for (const send of Object.values(senders)) await round(send) // warm-up: connections, JIT
for (let r = 0; r < ROUNDS; r++) for (const [name, send] of Object.entries(senders)) runs[name]!.push(await round(send))
console.log(`node ${process.version}; ${ROUNDS} interleaved rounds of ${REQUESTS} POSTs, ${IN_FLIGHT} in flight; CPU of the sending process per request, median (min-max):`)
for (const [name, xs] of Object.entries(runs)) console.log(`  ${name.padEnd(24)} ${median(xs).toFixed(1)} µs (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`)
const [floor, guarded] = Object.values(runs).map(median)
console.log(`  the guard ÷ the floor: ${(guarded! / floor!).toFixed(2)}`)
receiver.kill('SIGTERM')
guard.close()
await bare.close()
