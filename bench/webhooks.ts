// What webhooks cost and how fast they arrive (issue 41), on the service as production runs
// it (the build, Node 24, the API's role, a PostgreSQL server):
// 1. Latency: `--rate` job changes a second (1,000 by default), each its own transaction, for
//    `--seconds`, fanned out to `--endpoints` (10) endpoints of the organization, received by
//    a process of its own on 127.0.0.1: for every change and endpoint, from the change's commit
//    to the first delivery for its job received after it; p50, p95, p99, and changes never
//    followed by one (must be 0).
// 2. The floor, with the endpoints disabled: the same writer, and a process that POSTs each of
//    as many changes a second to each endpoint at once, signed, through undici, with no log,
//    queue or record (bench/webhook-floor-sender.ts): what the machine has left for the rest.
// 3. Writers: the bench's write workload (16 writers inserting screens of many jobs) with the
//    endpoints enabled (every write an event for each), disabled (the dispatcher idle), and
//    disabled while the floor sender POSTs as many deliveries a second as the service's
//    receiver got in the round's "on" (what so many deliveries cost any design on the shared
//    cores), in interleaved rounds; the ratios of the medians.
// BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npm run bench:webhooks [-- --rate 1000 --seconds 20 --endpoints 10 --rounds 3]
// (BENCH_SERVICE_ENV, bench/servers.ts: settings of the service, as JSON.)
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { cleanUp, cleanUpOnSignals } from './cleanup.js'
import { machineCpu, sampleCpu, type CpuSample } from './cpu.js'
import { startChild } from './processes.js'
import { median } from './report.js'
import { buildService, nodeBinary, startService } from './servers.js'
import { createBenchDatabase } from './throwaway-database.js'
import { createApiKey, createOrganization, createUser } from '../src/admin/commands.js'
import { openServerDatabase } from '../src/db/server-database.js'

const { values } = parseArgs({ options: { rate: { type: 'string' }, seconds: { type: 'string' }, endpoints: { type: 'string' }, rounds: { type: 'string' }, jobs: { type: 'string' } } })
const RATE = Number(values.rate ?? 1000)
const SECONDS = Number(values.seconds ?? 20)
const ENDPOINTS = Number(values.endpoints ?? 10)
const ROUNDS = Number(values.rounds ?? 3)
const JOBS = Number(values.jobs ?? 2000)
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
if (serverUrl === undefined) { console.error('BENCH_DATABASE_URL is required'); process.exit(2) }
const SECRET_KEY = Buffer.alloc(32, 3).toString('base64')
const WRITER = join(import.meta.dirname, 'webhook-writer.ts')
const WRITES = join(import.meta.dirname, 'writer.ts')
const RECEIVER = join(import.meta.dirname, 'webhook-receiver.ts')
const FLOOR_SENDER = join(import.meta.dirname, 'webhook-floor-sender.ts')

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN

async function child<T> (name: string, node: string, script: string, input: unknown): Promise<T> {
  const c = startChild(name, node, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] })
  c.process.stdin!.end(JSON.stringify(input))
  let out = ''
  c.process.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const [code] = await once(c.process, 'exit') as [number | null]
  await c.stop()
  if (code !== 0) throw new Error(`${name} exited with code ${code}`)
  return JSON.parse(out) as T
}

cleanUpOnSignals()
try {
  const node = nodeBinary()
  console.log(`node ${node.version} (${node.source}); ${RATE} changes/s for ${SECONDS} s to ${ENDPOINTS} endpoints; ${ROUNDS} rounds of writes`)
  await buildService()
  const db = await createBenchDatabase(serverUrl)
  const owner = openServerDatabase(db.url, { DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 60_000, DB_STATEMENT_TIMEOUT_MS: 60_000 })
  const org = await createOrganization(owner.prisma, { name: 'Bench', plan: 'pro', status: 'active', currentPeriodEnd: null })
  const user = await createUser(owner.prisma, { organizationId: org.id, email: 'bench@example.test', name: 'Bench' })
  const key = (await createApiKey(owner.prisma, { userId: user.id })).key
  await owner.prisma.$executeRaw`
    INSERT INTO jobs (organization_id, user_id, title, company_name, description, slug, share_token)
    SELECT ${org.id}::uuid, ${user.id}::uuid, 'Job ' || n, 'C', 'D', 'job-' || gen_random_uuid(), md5(n::text || random()) || md5(random()::text)
    FROM generate_series(1, ${JOBS}::int) n`
  const jobIds = (await owner.prisma.job.findMany({ select: { id: true } })).map(j => j.id)
  await owner.close()

  const dir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'))
  const receivedFile = join(dir, 'received.tsv')
  const receiver = startChild('receiver', node.path, ['--import', 'tsx', RECEIVER, receivedFile], { stdio: ['ignore', 'pipe', 'inherit'] })
  const [portLine] = await once(receiver.process.stdout!, 'data') as [Buffer]
  const receiverUrl = `http://127.0.0.1:${String(portLine).trim()}`
  const service = await startService(node, db.apiUrl, { WEBHOOK_SECRET_KEY: SECRET_KEY, WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', ...(process.env.BENCH_NODE_OPTIONS !== undefined ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}) })
  const api = async (method: string, path: string, body?: unknown): Promise<{ id: string }> => {
    const res = await fetch(service.url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
    return await res.json() as { id: string }
  }
  const endpoints: string[] = []
  for (let i = 0; i < ENDPOINTS; i++) endpoints.push((await api('POST', '/api/webhook_endpoints', { url: `${receiverUrl}/e${i}` })).id)

  // Each phase starts on tables vacuumed (this machine's cluster runs no autovacuum): the
  // dead rows of a phase's 20,000 updates would make the next one's writes dearer.
  const vacuum = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    try { await client.query('VACUUM ANALYZE') } finally { await client.end() }
  }

  // 1. Latency: a warm-up, then the measured changes.
  const writerOptions = { url: db.url, jobIds, rate: RATE, connections: 8 }
  await child('warm-up writer', node.path, WRITER, { ...writerOptions, seconds: 3 })
  await new Promise(resolve => setTimeout(resolve, 5000))
  await vacuum()
  const since = Date.now()
  const cpuBefore = sampleCpu(service.child.process.pid)
  const machineBefore = machineCpu()
  const written = await child<{ changes: Array<[string, number]>, seconds: number }>('writer', node.path, WRITER, { ...writerOptions, seconds: SECONDS })
  // Settle: until nothing more arrives for 3 s (60 s at most).
  let lastSize = -1
  for (let i = 0; i < 120; i++) {
    await new Promise(resolve => setTimeout(resolve, 500))
    const size = readFileSync(receivedFile, 'utf8').length
    if (size === lastSize && i >= 6) break
    lastSize = size
  }
  const cpuAfter = sampleCpu(service.child.process.pid)
  const machineAfter = machineCpu()
  const busyCores = (before: ReturnType<typeof machineCpu>, after: ReturnType<typeof machineCpu>, ms: number): number | undefined => before === undefined || after === undefined ? undefined : (after.busyMs - before.busyMs) / ms
  const received = new Map<string, number[]>() // endpoint:job -> receipt times, ascending
  for (const line of readFileSync(receivedFile, 'utf8').split('\n')) {
    const [endpoint, job, at] = line.split('\t')
    if (job === undefined || Number(at) < since) continue
    const key = `${endpoint}:${job}`
    ;(received.get(key) ?? received.set(key, []).get(key)!).push(Number(at))
  }
  for (const list of received.values()) list.sort((a, b) => a - b)
  const latencies: number[] = []
  let lost = 0
  for (const [job, committed] of written.changes) {
    for (let e = 0; e < ENDPOINTS; e++) {
      const at = received.get(`e${e}:${job}`)?.find(t => t >= committed)
      if (at === undefined) lost++
      else latencies.push(at - committed)
    }
  }
  latencies.sort((a, b) => a - b)
  const deliveries = [...received.values()].reduce((n, l) => n + l.length, 0)
  // CPU per delivery received (the settle's idle seconds included): what a delivery costs each side.
  const cpuPerDelivery = cpuBefore === undefined || cpuAfter === undefined || deliveries === 0 ? undefined : { serviceUs: 1000 * (cpuAfter.server - cpuBefore.server) / deliveries, databaseUs: 1000 * (cpuAfter.database - cpuBefore.database) / deliveries }
  const latencyCores = busyCores(machineBefore, machineAfter, Date.now() - since)
  const latency = { cpuPerDelivery, busyCores: latencyCores, changes: written.changes.length, changesPerSecond: written.changes.length / written.seconds, pairs: written.changes.length * ENDPOINTS, deliveries, lost, p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), p99: percentile(latencies, 0.99), max: latencies.at(-1) ?? NaN }
  console.log(`latency: ${latency.changes} changes (${latency.changesPerSecond.toFixed(0)}/s) × ${ENDPOINTS} endpoints, ${deliveries} deliveries received; commit to receipt p50 ${latency.p50} ms, p95 ${latency.p95} ms, p99 ${latency.p99} ms, max ${latency.max} ms; changes never followed by a delivery: ${lost}; machine busy ${latencyCores?.toFixed(2) ?? '?'} of ${machineAfter?.cores ?? '?'} cores (settle included)${cpuPerDelivery === undefined ? '' : `; CPU per delivery: service ${cpuPerDelivery.serviceUs.toFixed(0)} µs, PostgreSQL ${cpuPerDelivery.databaseUs.toFixed(0)} µs`}`)

  // 2. The floor: the endpoints disabled (the dispatcher idle), the writer and the floor sender at once.
  for (const id of endpoints) await api('PATCH', `/api/webhook_endpoints/${id}`, { status: 'disabled' })
  await vacuum()
  await new Promise(resolve => setTimeout(resolve, 2000))
  const floorStart = Date.now()
  const floorMachineBefore = machineCpu()
  const floorCpuBefore = sampleCpu(service.child.process.pid)
  const [floorSent, floorWritten] = await Promise.all([
    child<{ requests: number, answered: number, seconds: number, p50: number, p95: number, cpuMs: number }>('floor sender', node.path, FLOOR_SENDER, { url: receiverUrl, endpoints: ENDPOINTS, inFlight: 4, rate: RATE, seconds: SECONDS }),
    child<{ changes: Array<[string, number]>, seconds: number }>('floor writer', node.path, WRITER, { ...writerOptions, seconds: SECONDS }),
  ])
  const floorCpuAfter = sampleCpu(service.child.process.pid)
  const floor = {
    requests: floorSent.requests,
    answered: floorSent.answered,
    requestsPerSecond: floorSent.requests / floorSent.seconds,
    changesWritten: floorWritten.changes.length,
    p50: floorSent.p50,
    p95: floorSent.p95,
    senderUsPerRequest: 1000 * floorSent.cpuMs / floorSent.requests,
    databaseMs: floorCpuBefore === undefined || floorCpuAfter === undefined ? undefined : floorCpuAfter.database - floorCpuBefore.database,
    busyCores: busyCores(floorMachineBefore, machineCpu(), Date.now() - floorStart),
  }
  console.log(`floor: ${floor.requests} signed POSTs (${floor.requestsPerSecond.toFixed(0)}/s, ${floor.answered} answered 2xx) while ${floor.changesWritten} changes were written; due to answered p50 ${floor.p50} ms, p95 ${floor.p95} ms; sender ${floor.senderUsPerRequest.toFixed(0)} µs of CPU per request; machine busy ${floor.busyCores?.toFixed(2) ?? '?'} of ${machineAfter?.cores ?? '?'} cores`)

  // 3. Writers with the endpoints enabled (on), disabled (off), and disabled while the floor
  // sender POSTs as many deliveries a second as the service received in the round's "on"
  // (floor: what telling that many costs any design on these cores), interleaved.
  const screenWrites = { url: db.url, workload: 'insert', jobIds, screenIds: [], connections: 16, seconds: 10 }
  type WriteConfig = 'on' | 'off' | 'floor'
  const runs: Record<WriteConfig, number[]> = { on: [], off: [], floor: [] }
  const databaseUsPerWrite: Record<WriteConfig, number[]> = { on: [], off: [], floor: [] }
  const deliveriesPerSecond: number[] = []
  const receivedBetween = (from: number, to: number): number => readFileSync(receivedFile, 'utf8').split('\n').filter(line => { const at = Number(line.split('\t')[2]); return at >= from && at < to }).length
  for (let round = 0; round < ROUNDS; round++) {
    for (const config of (round % 2 === 0 ? ['on', 'floor', 'off'] : ['off', 'on', 'floor']) as WriteConfig[]) {
      for (const id of endpoints) await api('PATCH', `/api/webhook_endpoints/${id}`, { status: config === 'on' ? 'enabled' : 'disabled' })
      await new Promise(resolve => setTimeout(resolve, 2000))
      await vacuum()
      const before: CpuSample | undefined = sampleCpu(service.child.process.pid)
      const started = Date.now()
      const floorRate = (deliveriesPerSecond.at(-1) ?? 0) / ENDPOINTS
      const [{ transactions, seconds }, floorSender] = await Promise.all([
        child<{ transactions: number, seconds: number }>(`writes, webhooks ${config}`, node.path, WRITES, screenWrites),
        config === 'floor' ? child<{ requests: number, answered: number }>('floor sender', node.path, FLOOR_SENDER, { url: receiverUrl, endpoints: ENDPOINTS, inFlight: 4, rate: floorRate, seconds: screenWrites.seconds }) : undefined,
      ])
      // A floor whose POSTs failed would have cost the writers less than the deliveries it stands for.
      if (floorSender !== undefined && floorSender.answered !== floorSender.requests) throw new Error(`floor sender: ${floorSender.answered} of ${floorSender.requests} POSTs answered 2xx`)
      const after = sampleCpu(service.child.process.pid)
      if (config === 'on') {
        // The receiver writes its lines every 200 ms.
        const ended = Date.now()
        await new Promise(resolve => setTimeout(resolve, 500))
        deliveriesPerSecond.push(receivedBetween(started, ended) / ((ended - started) / 1000))
      }
      runs[config].push(transactions / seconds)
      if (before !== undefined && after !== undefined) databaseUsPerWrite[config].push(1000 * (after.database - before.database) / transactions)
      console.log(`writes, webhooks ${config}: ${(transactions / seconds).toFixed(0)} tx/s; PostgreSQL CPU ${databaseUsPerWrite[config].at(-1)?.toFixed(0) ?? '?'} µs per write${config === 'on' ? `; ${deliveriesPerSecond.at(-1)!.toFixed(0)} deliveries received a second` : config === 'floor' ? `; the floor sender at ${(floorRate * ENDPOINTS).toFixed(0)} POSTs a second` : ''}`)
    }
  }
  const writes = {
    on: median(runs.on),
    off: median(runs.off),
    floor: median(runs.floor),
    ratio: median(runs.on) / median(runs.off),
    ofFloor: median(runs.on) / median(runs.floor),
    floorRatio: median(runs.floor) / median(runs.off),
    deliveriesPerSecond: median(deliveriesPerSecond),
    runs,
    databaseUsPerWrite: { on: median(databaseUsPerWrite.on), off: median(databaseUsPerWrite.off), floor: median(databaseUsPerWrite.floor) },
  }
  console.log(`writes (16 writers inserting screens of many jobs): ${writes.on.toFixed(0)} tx/s with webhooks on, ${writes.off.toFixed(0)} off, ${writes.floor.toFixed(0)} with the floor sender at the deliveries' rate: on ÷ off ${writes.ratio.toFixed(3)}, on ÷ floor ${writes.ofFloor.toFixed(3)}, floor ÷ off ${writes.floorRatio.toFixed(3)}`)

  await service.child.stop()
  await receiver.stop()
  const stamp = new Date().toISOString().replace(/:/g, '').slice(0, 15).replace('T', '-')
  const results = join(import.meta.dirname, 'results')
  mkdirSync(results, { recursive: true })
  const record = { date: new Date().toISOString(), node: node.version, rate: RATE, seconds: SECONDS, endpoints: ENDPOINTS, jobs: JOBS, latency, floor, writes }
  writeFileSync(join(results, `${stamp}-webhooks.json`), JSON.stringify(record, null, 2) + '\n')
  writeFileSync(join(results, `${stamp}-webhooks.md`), [
    `# Webhooks bench, ${record.date}`,
    '',
    `Node ${node.version}, the service's build on a PostgreSQL server as the API's role; ${JOBS} jobs; receiver and writer in processes of their own on 127.0.0.1.`,
    '',
    '| | figure |',
    '|---|---:|',
    `| changes written (one a transaction) | ${latency.changes} in ${written.seconds.toFixed(1)} s (${latency.changesPerSecond.toFixed(0)}/s) |`,
    `| endpoints | ${ENDPOINTS} |`,
    `| deliveries received | ${deliveries} |`,
    `| commit to receipt, p50 / p95 / p99 / max | ${latency.p50} / ${latency.p95} / ${latency.p99} / ${latency.max} ms |`,
    `| changes never followed by a delivery | ${lost} |`,
    `| machine busy during the latency run (settle included) | ${latency.busyCores?.toFixed(2) ?? '?'} of ${machineAfter?.cores ?? '?'} cores |`,
    `| floor: signed POSTs, no log, queue or record, while the same changes are written | ${floor.requests} (${floor.requestsPerSecond.toFixed(0)}/s), ${floor.answered} answered 2xx |`,
    `| floor: due to answered, p50 / p95 | ${floor.p50} / ${floor.p95} ms |`,
    `| floor: sender's CPU per request; machine busy | ${floor.senderUsPerRequest.toFixed(0)} µs; ${floor.busyCores?.toFixed(2) ?? '?'} of ${machineAfter?.cores ?? '?'} cores |`,
    `| writes (16 writers, screens of many jobs), webhooks on / off, medians of ${ROUNDS} | ${writes.on.toFixed(0)} / ${writes.off.toFixed(0)} tx/s: ${writes.ratio.toFixed(3)} |`,
    `| writes with the endpoints disabled and the floor sender POSTing the deliveries the "on" rounds received (${writes.deliveriesPerSecond.toFixed(0)} a second, median) | ${writes.floor.toFixed(0)} tx/s: floor ÷ off ${writes.floorRatio.toFixed(3)}, on ÷ floor ${writes.ofFloor.toFixed(3)} |`,
    `| PostgreSQL CPU per write, webhooks on / floor / off (medians; on: the deliveries' share included) | ${writes.databaseUsPerWrite.on.toFixed(0)} / ${writes.databaseUsPerWrite.floor.toFixed(0)} / ${writes.databaseUsPerWrite.off.toFixed(0)} µs |`,
    ...(latency.cpuPerDelivery === undefined ? [] : [`| CPU per delivery (latency run): service / PostgreSQL | ${latency.cpuPerDelivery.serviceUs.toFixed(0)} / ${latency.cpuPerDelivery.databaseUs.toFixed(0)} µs |`]),
    `| rounds, on | ${runs.on.map(r => r.toFixed(0)).join(', ')} |`,
    `| rounds, off | ${runs.off.map(r => r.toFixed(0)).join(', ')} |`,
    `| rounds, floor | ${runs.floor.map(r => r.toFixed(0)).join(', ')} |`,
    '',
  ].join('\n'))
  console.log(`wrote bench/results/${stamp}-webhooks.md`)
} finally {
  await cleanUp()
}
