// One organization's backlog and another's first attempts (issue 55): the service as
// production runs it (the build, Node 24, a PostgreSQL server), a "noisy" organization of 16
// endpoints that accept connections and never answer (each attempt waits WEBHOOK_TIMEOUT_MS,
// then is retried) and a "quiet" one of one endpoint that answers at once. Writers change
// `--noisy-rate` noisy jobs and `--quiet-rate` quiet jobs a second for `--seconds`, each change
// its own transaction. Measured: every quiet change's commit to the receipt of its first
// delivery after it, p50 / p95 / p99, in rounds with the noisy endpoints enabled (all timing
// out) and disabled (the baseline), interleaved; the ratios of the medians of each round's p95.
// BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npx tsx bench/webhook-isolation.ts [-- --rounds 3 --seconds 20]
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cleanUp, cleanUpOnSignals } from './cleanup.js'
import { startChild } from './processes.js'
import { median } from './report.js'
import { buildService, nodeBinary, startService } from './servers.js'
import { createBenchDatabase } from './throwaway-database.js'
import { createApiKey, createOrganization, createUser } from '../src/admin/commands.js'
import { openServerDatabase } from '../src/db/server-database.js'

const { values } = parseArgs({ options: { rounds: { type: 'string' }, seconds: { type: 'string' }, 'noisy-rate': { type: 'string' }, 'quiet-rate': { type: 'string' } } })
const ROUNDS = Number(values.rounds ?? 3)
const SECONDS = Number(values.seconds ?? 20)
const NOISY_RATE = Number(values['noisy-rate'] ?? 50)
const QUIET_RATE = Number(values['quiet-rate'] ?? 10)
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
if (serverUrl === undefined) { console.error('BENCH_DATABASE_URL is required'); process.exit(2) }
const WRITER = join(import.meta.dirname, 'webhook-writer.ts')
const RECEIVER = join(import.meta.dirname, 'webhook-receiver.ts')
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN

async function writer (node: string, input: unknown): Promise<{ changes: Array<[string, number]>, seconds: number }> {
  const c = startChild('writer', node, ['--import', 'tsx', WRITER], { stdio: ['pipe', 'pipe', 'inherit'] })
  c.process.stdin!.end(JSON.stringify(input))
  let out = ''
  c.process.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString() })
  await once(c.process, 'exit')
  await c.stop()
  return JSON.parse(out) as { changes: Array<[string, number]>, seconds: number }
}

cleanUpOnSignals()
try {
  const node = nodeBinary()
  await buildService()
  const db = await createBenchDatabase(serverUrl)
  const owner = openServerDatabase(db.url, { DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 60_000, DB_STATEMENT_TIMEOUT_MS: 60_000 })
  const tenant = async (name: string, jobs: number) => {
    const org = await createOrganization(owner.prisma, { name, plan: 'pro', status: 'active', currentPeriodEnd: null })
    const user = await createUser(owner.prisma, { organizationId: org.id, email: `${name}@example.test`, name })
    await owner.prisma.$executeRaw`
      INSERT INTO jobs (organization_id, user_id, title, company_name, description, slug, share_token)
      SELECT ${org.id}::uuid, ${user.id}::uuid, 'Job ' || n, 'C', 'D', 'job-' || gen_random_uuid(), md5(n::text || random()) || md5(random()::text)
      FROM generate_series(1, ${jobs}::int) n`
    const jobIds = (await owner.prisma.job.findMany({ where: { organizationId: org.id }, select: { id: true } })).map(j => j.id)
    return { key: (await createApiKey(owner.prisma, { userId: user.id })).key, jobIds }
  }
  const noisy = await tenant('noisy', 500)
  const quiet = await tenant('quiet', 100)
  await owner.close()

  // The noisy endpoints' receiver: it takes every request and never answers.
  const silent = createServer(() => {})
  await new Promise<void>(resolve => { silent.listen(0, '127.0.0.1', resolve) })
  const dir = mkdtempSync(join(tmpdir(), 'bench-isolation-'))
  const receivedFile = join(dir, 'received.tsv')
  const receiver = startChild('receiver', node.path, ['--import', 'tsx', RECEIVER, receivedFile], { stdio: ['ignore', 'pipe', 'inherit'] })
  const [portLine] = await once(receiver.process.stdout!, 'data') as [Buffer]
  const service = await startService(node, db.apiUrl, { WEBHOOK_SECRET_KEY: Buffer.alloc(32, 3).toString('base64'), WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' })
  const api = async (key: string, method: string, path: string, body?: unknown): Promise<{ id: string }> => {
    const res = await fetch(service.url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
    return await res.json() as { id: string }
  }
  const noisyEndpoints: string[] = []
  for (let i = 0; i < 16; i++) noisyEndpoints.push((await api(noisy.key, 'POST', '/api/webhook_endpoints', { url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/n${i}` })).id)
  await api(quiet.key, 'POST', '/api/webhook_endpoints', { url: `http://127.0.0.1:${String(portLine).trim()}/q` })

  type Config = 'noisy timing out' | 'noisy disabled'
  const p95s: Record<Config, number[]> = { 'noisy timing out': [], 'noisy disabled': [] }
  const rows: string[] = []
  for (let round = 0; round < ROUNDS; round++) {
    for (const config of (round % 2 === 0 ? ['noisy timing out', 'noisy disabled'] : ['noisy disabled', 'noisy timing out']) as Config[]) {
      for (const id of noisyEndpoints) await api(noisy.key, 'PATCH', `/api/webhook_endpoints/${id}`, { status: config === 'noisy disabled' ? 'disabled' : 'enabled' })
      await new Promise(resolve => setTimeout(resolve, 3000))
      const since = Date.now()
      const [, written] = await Promise.all([
        writer(node.path, { url: db.url, jobIds: noisy.jobIds, rate: NOISY_RATE, connections: 4, seconds: SECONDS }),
        writer(node.path, { url: db.url, jobIds: quiet.jobIds, rate: QUIET_RATE, connections: 2, seconds: SECONDS }),
      ])
      await new Promise(resolve => setTimeout(resolve, 3000))
      const received = new Map<string, number[]>()
      for (const line of readFileSync(receivedFile, 'utf8').split('\n')) {
        const [, job, at] = line.split('\t')
        if (job !== undefined && Number(at) >= since) (received.get(job) ?? received.set(job, []).get(job)!).push(Number(at))
      }
      const latencies: number[] = []
      let lost = 0
      for (const [job, committed] of written.changes) {
        const at = received.get(job)?.sort((a, b) => a - b).find(t => t >= committed)
        if (at === undefined) lost++
        else latencies.push(at - committed)
      }
      latencies.sort((a, b) => a - b)
      const figures = { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), p99: percentile(latencies, 0.99), max: latencies.at(-1) ?? NaN }
      p95s[config].push(figures.p95)
      const row = `| ${round + 1} | ${config} | ${written.changes.length} | ${figures.p50} / ${figures.p95} / ${figures.p99} / ${figures.max} ms | ${lost} |`
      rows.push(row)
      console.log(row)
    }
  }
  const timingOut = median(p95s['noisy timing out'])
  const baseline = median(p95s['noisy disabled'])
  const summary = `quiet organization's first attempts, p95 (median of ${ROUNDS} rounds): ${timingOut} ms while the noisy organization's 16 endpoints all time out, ${baseline} ms with them disabled: ${(timingOut / baseline).toFixed(2)}×`
  console.log(summary)
  await service.child.stop()
  await receiver.stop()
  silent.closeAllConnections()
  silent.close()
  const stamp = new Date().toISOString().replace(/:/g, '').slice(0, 15).replace('T', '-')
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true })
  writeFileSync(join(import.meta.dirname, 'results', `${stamp}-webhook-isolation.md`), [
    `# Webhook isolation bench, ${new Date().toISOString()}`,
    '',
    `Node ${node.version}, the service's build on a PostgreSQL server as the API's role. Noisy: 16 endpoints that never answer (WEBHOOK_TIMEOUT_MS 15 s), ${NOISY_RATE} changes a second; quiet: 1 endpoint answering at once, ${QUIET_RATE} changes a second; ${SECONDS} s a round.`,
    '',
    '| round | noisy endpoints | quiet changes | quiet commit to receipt, p50 / p95 / p99 / max | never followed by a delivery |',
    '|---:|---|---:|---:|---:|',
    ...rows,
    '',
    summary,
    '',
  ].join('\n'))
  console.log(`wrote bench/results/${stamp}-webhook-isolation.md`)
} finally {
  await cleanUp()
}
