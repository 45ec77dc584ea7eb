// What the service's process holds in memory under load, against the hand-written baseline
// (bench/baseline/: node:http and pg) in the same run (issue 42): both on Node 24 and the same
// database (the quick dataset), each loaded in turn (get job, analytics and the list of a
// 200-screen job's organization, 16 connections) for `--seconds`, `--rounds` times
// interleaved; after each load, each process's resident memory (VmRSS) and, for the
// service, V8's own figures (its /metrics). The service runs as production does, its webhook
// worker started (an endpoint is enabled, on a receiver of this process): counted in its
// memory. Ratio: the medians of the rounds' RSS. Writes bench/results/<date>-memory.{md,json}.
// With --dashboard, the service's load also asks the dashboard's operations (issue 56): the
// batch of the organization's jobs and its rollup, in six zones, with and without a compared
// range (24 questions, their answers kept); the baseline, which has none of them, its own mix.
// BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npm run bench:memory [-- --rounds 3 --seconds 60 --dashboard]
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cleanUp, cleanUpOnSignals } from './cleanup.js'
import { loadDataset } from './dataset.js'
import { measure, type LoadSettings } from './load.js'
import { median } from './report.js'
import { pathsOf } from './scenarios.js'
import { assertAlive, buildService, nodeBinary, startBaseline, startService, type Server } from './servers.js'
import { createBenchDatabase } from './throwaway-database.js'

const { values } = parseArgs({ options: { rounds: { type: 'string' }, seconds: { type: 'string' }, env: { type: 'string', multiple: true }, dashboard: { type: 'boolean' } } })
const ROUNDS = Number(values.rounds ?? 3)
const SECONDS = Number(values.seconds ?? 60)
/** Extra environment for the service (`--env NAME=value`, repeatable): to try a setting against the same baseline. */
const EXTRA_ENV = Object.fromEntries((values.env ?? []).map(kv => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]))
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
if (serverUrl === undefined) { console.error('BENCH_DATABASE_URL is required'); process.exit(2) }
const METRICS_TOKEN = 'bench-metrics-token-0123456789'

/** The dashboard's questions: the batch of the organization's first 100 jobs and its rollup, in six zones, plain and compared. */
async function dashboardRequests (url: string, apiKey: string): Promise<Array<{ path: string }>> {
  const list = await fetch(`${url}/api/jobs?limit=100`, { headers: { authorization: `Bearer ${apiKey}` } })
  const ids = ((await list.json()) as { data: Array<{ id: string }> }).data.map(job => job.id)
  const batch = `/api/analytics/jobs?${ids.map(id => `job_id=${id}`).join('&')}`
  return ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney', 'America/Sao_Paulo'].flatMap(tz =>
    ['', '&from=2026-01-05&to=2026-06-28&compare=previous_period'].flatMap(range => [
      { path: `${batch}&tz=${tz}${range}` },
      { path: `/api/analytics/organization?tz=${tz}${range}` },
    ]))
}

/** Resident memory of a process, MB (Linux /proc). */
function rssMb (pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (match === null) throw new Error(`no VmRSS for ${pid}`)
  return Number(match[1]) / 1024
}

/** Resident memory by kind of mapping (Linux /proc/<pid>/smaps), MB: what V8's figures leave out. */
function mappingsMb (pid: number): Record<string, number> {
  const parts: Record<string, number> = {}
  let kind = ''
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (header !== null) {
      const path = header[1]!.trim()
      kind = path === '' ? 'anonymous' : path.startsWith('[') ? path : /\/node$|bin\/node$/.test(path) ? 'the node binary' : path.endsWith('.node') ? 'native addons' : /\.so(\.|$)/.test(path) ? 'shared libraries' : 'other files'
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss !== null) parts[kind] = (parts[kind] ?? 0) + Number(rss[1]) / 1024
  }
  return parts
}

/** The service's own view (prom-client's defaults), MB. */
async function v8Figures (server: Server): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
  const value = (name: string, labels = ''): number => {
    const line = text.split('\n').find(l => l.startsWith(`${name}${labels === '' ? ' ' : `{${labels}}`}`))
    return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1)) / 2 ** 20
  }
  return {
    heapTotal: value('nodejs_heap_size_total_bytes'),
    heapUsed: value('nodejs_heap_size_used_bytes'),
    external: value('nodejs_external_memory_bytes'),
    newSpace: value('nodejs_heap_space_size_total_bytes', 'space="new"'),
    oldSpace: value('nodejs_heap_space_size_total_bytes', 'space="old"'),
    codeSpace: value('nodejs_heap_space_size_total_bytes', 'space="code"'),
  }
}

cleanUpOnSignals()
try {
  const node = nodeBinary()
  console.log(`node ${node.version} (${node.source}); ${ROUNDS} rounds of ${SECONDS} s per server${Object.keys(EXTRA_ENV).length > 0 ? `; service env ${JSON.stringify(EXTRA_ENV)}` : ''}`)
  await buildService()
  const db = await createBenchDatabase(serverUrl)
  const dataset = await loadDataset(db.url, true, 1)
  const paths = pathsOf(dataset)

  // A receiver for the webhook endpoint: answers 204 (no job changes during the reads anyway).
  const receiver = createServer((request, response) => { request.resume(); request.on('end', () => { response.writeHead(204).end() }) })
  await new Promise<void>(resolve => { receiver.listen(0, '127.0.0.1', resolve) })
  const service = await startService(node, db.apiUrl, { WEBHOOK_SECRET_KEY: Buffer.alloc(32, 5).toString('base64'), WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', ...EXTRA_ENV })
  const baseline = await startBaseline(node, db.apiUrl)
  const made = await fetch(`${service.url}/api/webhook_endpoints`, { method: 'POST', headers: { authorization: `Bearer ${dataset.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` }) })
  if (made.status !== 201) throw new Error(`webhook endpoint: ${made.status} ${await made.text()}`)
  const idle = { service: rssMb(service.child.process.pid!), baseline: rssMb(baseline.child.process.pid!) }
  console.log(`idle: service ${idle.service.toFixed(0)} MB, baseline ${idle.baseline.toFixed(0)} MB`)

  const requests = [{ path: paths.smallJob }, { path: paths.smallAnalytics }, { path: paths.firstPage }]
  const serviceRequests = values.dashboard === true ? [...requests, ...await dashboardRequests(service.url, dataset.apiKey)] : requests
  const load: LoadSettings = { seconds: SECONDS, connections: 16, headers: { authorization: `Bearer ${dataset.apiKey}` } }
  const rounds: Array<{ service: number, baseline: number, serviceRps: number, baselineRps: number, v8: Record<string, number> }> = []
  for (let r = 1; r <= ROUNDS; r++) {
    const row = { service: 0, baseline: 0, serviceRps: 0, baselineRps: 0, v8: {} as Record<string, number> }
    for (const [side, server] of (r % 2 === 1 ? [['service', service], ['baseline', baseline]] : [['baseline', baseline], ['service', service]]) as Array<['service' | 'baseline', Server]>) {
      const m = await measure(node, server.url, side === 'service' ? serviceRequests : requests, load)
      assertAlive(server)
      if (m.bad > 0) throw new Error(`${side}: ${m.bad} bad answers (${JSON.stringify(m.statusCodes)})`)
      row[side] = rssMb(server.child.process.pid!)
      row[side === 'service' ? 'serviceRps' : 'baselineRps'] = m.requestsPerSecond
      if (side === 'service') row.v8 = await v8Figures(service)
    }
    rounds.push(row)
    console.log(`[${r}/${ROUNDS}] RSS after ${SECONDS} s of load: service ${row.service.toFixed(0)} MB (${row.serviceRps.toFixed(0)} req/s; V8 heap ${row.v8.heapTotal!.toFixed(0)} MB, of which new space ${row.v8.newSpace!.toFixed(0)}, old ${row.v8.oldSpace!.toFixed(0)}; external ${row.v8.external!.toFixed(0)}), baseline ${row.baseline.toFixed(0)} MB (${row.baselineRps.toFixed(0)} req/s)`)
  }
  const mappings = { service: mappingsMb(service.child.process.pid!), baseline: mappingsMb(baseline.child.process.pid!) }
  const kinds = [...new Set([...Object.keys(mappings.service), ...Object.keys(mappings.baseline)])].sort((a, b) => (mappings.service[b] ?? 0) - (mappings.service[a] ?? 0))
  for (const kind of kinds) console.log(`  ${kind}: service ${(mappings.service[kind] ?? 0).toFixed(1)} MB, baseline ${(mappings.baseline[kind] ?? 0).toFixed(1)} MB`)
  const result = {
    mappings,
    date: new Date().toISOString(),
    node: node.version,
    seconds: SECONDS,
    env: EXTRA_ENV,
    dashboard: values.dashboard === true,
    idle,
    rounds,
    service: median(rounds.map(r => r.service)),
    baseline: median(rounds.map(r => r.baseline)),
    ratio: median(rounds.map(r => r.service)) / median(rounds.map(r => r.baseline)),
  }
  console.log(`RSS under load, medians of ${ROUNDS}: service ${result.service.toFixed(0)} MB, baseline ${result.baseline.toFixed(0)} MB: ${result.ratio.toFixed(2)}x (goal: 2x at most)`)
  await service.child.stop()
  await baseline.child.stop()
  receiver.close()
  const stamp = new Date().toISOString().replace(/:/g, '').slice(0, 15).replace('T', '-')
  const dir = join(import.meta.dirname, 'results')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, `${stamp}-memory.json`), JSON.stringify(result, null, 2) + '\n')
  writeFileSync(join(dir, `${stamp}-memory.md`), [
    `# Memory bench, ${result.date}`,
    '',
    `Node ${node.version}; the service's build (webhook worker started) and the baseline on the quick dataset; get job, analytics and the list of a 200-screen job's organization, 16 connections, ${SECONDS} s per load, ${ROUNDS} rounds interleaved.${values.dashboard === true ? ' The service\'s load also asks the dashboard\'s batch and rollup (24 questions, `--dashboard`).' : ''}${Object.keys(EXTRA_ENV).length > 0 ? ` Service environment: \`${JSON.stringify(EXTRA_ENV)}\`.` : ''}`,
    '',
    '| | service | baseline | ratio |',
    '|---|---:|---:|---:|',
    `| RSS idle (MB) | ${idle.service.toFixed(0)} | ${idle.baseline.toFixed(0)} | ${(idle.service / idle.baseline).toFixed(2)} |`,
    ...rounds.map((r, i) => `| RSS after load, round ${i + 1} (MB; req/s) | ${r.service.toFixed(0)} (${r.serviceRps.toFixed(0)}) | ${r.baseline.toFixed(0)} (${r.baselineRps.toFixed(0)}) | ${(r.service / r.baseline).toFixed(2)} |`),
    `| **median** | **${result.service.toFixed(0)}** | **${result.baseline.toFixed(0)}** | **${result.ratio.toFixed(2)}** |`,
    '',
    'The service\'s V8 figures after each round (MB): ' + rounds.map(r => `heap ${r.v8.heapTotal!.toFixed(0)} (new ${r.v8.newSpace!.toFixed(0)}, old ${r.v8.oldSpace!.toFixed(0)}, code ${r.v8.codeSpace!.toFixed(0)}), external ${r.v8.external!.toFixed(0)}`).join('; ') + '.',
    '',
    'Resident memory by kind of mapping after the last round (MB, /proc/<pid>/smaps; V8\'s heap, malloc\'s arenas and WebAssembly code are all anonymous):',
    '',
    '| mapping | service | baseline |',
    '|---|---:|---:|',
    ...kinds.map(kind => `| ${kind} | ${(mappings.service[kind] ?? 0).toFixed(1)} | ${(mappings.baseline[kind] ?? 0).toFixed(1)} |`),
    '',
  ].join('\n'))
  console.log(`wrote bench/results/${stamp}-memory.md`)
} finally {
  await cleanUp()
}
