// npm run bench:tracing [-- --rounds 5 --seconds 10 --without <git ref>]
// What tracing costs (issue 57): CPU per request of the service's production build with
// tracing off, against the same build of the code before tracing (`--without`, a commit,
// built in a worktree of its own), and with tracing on (every request sampled, exported over
// OTLP http/protobuf to a receiver process on 127.0.0.1); resident memory of each after its
// load, against the hand-written baseline (bench/baseline/). Get job and analytics of the
// 200-screen job (the quick dataset), 16 connections, the servers in a rotated order each
// round, medians; ratios from this one run. Writes bench/results/<date>-tracing.{md,json}.
// BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npm run bench:tracing
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cleanUp, cleanUpOnSignals, onCleanup } from './cleanup.js'
import { mainThreadCpuMs, perRequest, sampleCpu } from './cpu.js'
import { loadDataset } from './dataset.js'
import { measure, type LoadSettings } from './load.js'
import { runToEnd, startChild } from './processes.js'
import { median } from './report.js'
import { pathsOf } from './scenarios.js'
import { assertAlive, buildService, nodeBinary, startBaseline, startService, type Server } from './servers.js'
import { createBenchDatabase } from './throwaway-database.js'

const ROOT = join(import.meta.dirname, '..')
const { values } = parseArgs({ options: { rounds: { type: 'string' }, seconds: { type: 'string' }, warmup: { type: 'string' }, without: { type: 'string' }, 'on-env': { type: 'string', multiple: true } } })
const ROUNDS = Number(values.rounds ?? 5)
const SECONDS = Number(values.seconds ?? 10)
const WARMUP = Number(values.warmup ?? 2)
// The last commit before the tracing code (issue 57, parts 1 and 2).
const WITHOUT = values.without ?? 'ff4e924'
/** Extra environment of the traced server (`--on-env NAME=value`, repeatable): to try an exporter's setting. */
const ON_ENV = Object.fromEntries((values['on-env'] ?? []).map(kv => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]))
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
if (serverUrl === undefined) { console.error('BENCH_DATABASE_URL is required'); process.exit(2) }

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
const WORKTREE = join(ROOT, 'node_modules/.cache/bench-without-tracing')
const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim()

/** The commit's production build, in a worktree whose node_modules is this checkout's. */
async function buildWithout (ref: string): Promise<string> {
  const remove = (): void => {
    // The link first: nothing may reach through it into this checkout's node_modules.
    rmSync(join(WORKTREE, 'node_modules'), { force: true })
    rmSync(WORKTREE, { recursive: true, force: true })
    git('worktree', 'prune')
  }
  if (existsSync(WORKTREE)) remove()
  git('worktree', 'add', '--detach', '--force', WORKTREE, ref)
  onCleanup('remove the worktree', remove)
  symlinkSync(join(ROOT, 'node_modules'), join(WORKTREE, 'node_modules'))
  const quiet = { cwd: WORKTREE, stdio: ['ignore', 'ignore', 'inherit'] as ['ignore', 'ignore', 'inherit'] }
  await runToEnd('prisma generate (without tracing)', process.execPath, ['scripts/prisma-generate.mjs'], quiet)
  await runToEnd('npm run build (without tracing)', process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], quiet)
  return WORKTREE
}

/** The OTLP receiver's process; its URL and its counts. */
async function startSink (node: string): Promise<{ url: string, stats: () => Promise<{ exports: number, bytes: number }> }> {
  const child = startChild('otlp sink', node, ['--import', 'tsx', join(import.meta.dirname, 'otlp-sink.ts')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  const [line] = await once(child.process.stdout!, 'data') as [Buffer]
  const url = `http://127.0.0.1:${Number(line.toString().trim())}`
  return { url, stats: async () => await (await fetch(`${url}/stats`)).json() as { exports: number, bytes: number } }
}

type Variant = 'without' | 'off' | 'on'
const VARIANTS: Variant[] = ['without', 'off', 'on']
interface Sample { cpu: number, main: number, database: number, rps: number, rss: number }

cleanUpOnSignals()
try {
  const node = nodeBinary()
  const without = git('rev-parse', '--short', WITHOUT)
  const head = git('rev-parse', '--short', 'HEAD')
  const dirty = git('status', '--porcelain', '--', 'src') !== ''
  console.log(`node ${node.version}; ${ROUNDS} rounds of ${SECONDS} s (after ${WARMUP} s of warm-up) per server and scenario; without tracing: ${without}, with: ${head}${Object.keys(ON_ENV).length > 0 ? `; traced server's env ${JSON.stringify(ON_ENV)}` : ''}${dirty ? ' (plus uncommitted changes in src/)' : ''}`)
  await buildService()
  const withoutDir = await buildWithout(WITHOUT)
  const db = await createBenchDatabase(serverUrl)
  const dataset = await loadDataset(db.url, true, 1)
  const paths = pathsOf(dataset)
  const sink = await startSink(node.path)
  const servers: Record<Variant, Server> = {
    without: await startService(node, db.apiUrl, {}, withoutDir, 'without tracing'),
    off: await startService(node, db.apiUrl, {}, ROOT, 'tracing off'),
    on: await startService(node, db.apiUrl, { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'always_on', ...ON_ENV }, ROOT, 'tracing on'),
  }
  const baseline = await startBaseline(node, db.apiUrl)
  const scenarios = [{ name: 'get job (200 screens)', path: paths.smallJob }, { name: 'analytics (200 screens)', path: paths.smallAnalytics }]
  const load: LoadSettings = { seconds: SECONDS, connections: 16, headers: { authorization: `Bearer ${dataset.apiKey}` } }
  const samples: Record<string, Record<Variant | 'baseline', Sample[]>> = Object.fromEntries(scenarios.map(s => [s.name, { without: [], off: [], on: [], baseline: [] }]))

  const once_ = async (server: Server, path: string): Promise<Sample> => {
    assertAlive(server)
    await measure(node, server.url, [{ path }], { ...load, seconds: WARMUP })
    const pid = server.child.process.pid!
    const before = sampleCpu(pid)
    const mainBefore = mainThreadCpuMs(pid)!
    const m = await measure(node, server.url, [{ path }], load)
    const cpu = perRequest(before, sampleCpu(pid), m.total)!
    const main = (mainThreadCpuMs(pid)! - mainBefore) / m.total
    assertAlive(server)
    if (m.bad > 0) throw new Error(`${server.name}: ${m.bad} bad answers (${JSON.stringify(m.statusCodes)})`)
    return { cpu: cpu.server, main, database: cpu.database, rps: m.requestsPerSecond, rss: rssMb(server.child.process.pid!) }
  }
  for (let r = 0; r < ROUNDS; r++) {
    // Each round starts with another server: none is always measured first or last.
    const order = [...VARIANTS.slice(r % 3), ...VARIANTS.slice(0, r % 3), 'baseline' as const]
    for (const scenario of scenarios) {
      for (const variant of order) {
        const s = await once_(variant === 'baseline' ? baseline : servers[variant], scenario.path)
        samples[scenario.name]![variant].push(s)
        console.log(`  [${r + 1}/${ROUNDS}] ${scenario.name.padEnd(24)} ${variant.padEnd(8)} ${s.rps.toFixed(0).padStart(6)} req/s  service CPU ${s.cpu.toFixed(3)} ms/request (main thread ${s.main.toFixed(3)})  PostgreSQL ${s.database.toFixed(3)}  RSS ${s.rss.toFixed(0)} MB`)
      }
    }
  }
  const exported = await sink.stats()
  const m = (scenario: string, variant: Variant | 'baseline', key: keyof Sample): number => median(samples[scenario]![variant].map(s => s[key]))
  const table = scenarios.map(({ name }) => ({
    scenario: name,
    cpu: Object.fromEntries([...VARIANTS, 'baseline'].map(v => [v, m(name, v as Variant, 'cpu')])),
    offVsWithout: m(name, 'off', 'cpu') / m(name, 'without', 'cpu'),
    onVsOff: m(name, 'on', 'cpu') / m(name, 'off', 'cpu'),
  }))
  const rss = Object.fromEntries([...VARIANTS, 'baseline'].map(v => [v, median(scenarios.flatMap(({ name }) => samples[name]![v as Variant].map(s => s.rss)))]))
  const result = { date: new Date().toISOString(), node: node.version, without, head, rounds: ROUNDS, seconds: SECONDS, table, rss, memoryOnVsBaseline: rss.on! / rss.baseline!, exported, samples }
  const lines = [
    `# Tracing bench, ${result.date}`,
    '',
    `Node ${node.version}; production builds of ${head}${dirty ? ' plus uncommitted changes in src/' : ''} (tracing off, and on: OTEL_TRACES_SAMPLER=always_on, OTLP http/protobuf to a receiver process on 127.0.0.1${Object.keys(ON_ENV).length > 0 ? `; the traced server's env ${JSON.stringify(ON_ENV)}` : ''}) and of ${without} (before the tracing code); the quick dataset's 200-screen job; 16 connections; ${ROUNDS} rounds of ${SECONDS} s, the servers in a rotated order; medians. CPU: the service process's, per request (/proc).`,
    '',
    '| scenario | without tracing (ms) | tracing off (ms) | tracing on (ms) | baseline (ms) | off ÷ without (goal ≤ 1.03) | on ÷ off (goal ≤ 1.25) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...table.map(row => `| ${row.scenario} | ${row.cpu.without!.toFixed(3)} | ${row.cpu.off!.toFixed(3)} | ${row.cpu.on!.toFixed(3)} | ${row.cpu.baseline!.toFixed(3)} | **${row.offVsWithout.toFixed(3)}** | **${row.onVsOff.toFixed(3)}** |`),
    '',
    `RSS after load, medians (MB): without tracing ${rss.without!.toFixed(0)}, tracing off ${rss.off!.toFixed(0)}, tracing on ${rss.on!.toFixed(0)}, baseline ${rss.baseline!.toFixed(0)}: tracing on ÷ baseline **${result.memoryOnVsBaseline.toFixed(2)}** (goal ≤ 2).`,
    '',
    `The receiver got ${exported.exports} exports (${(exported.bytes / 2 ** 20).toFixed(1)} MB of spans).`,
    '',
  ]
  console.log(`\n${lines.slice(2).join('\n')}`)
  for (const server of [...Object.values(servers), baseline]) await server.child.stop()
  const stamp = new Date().toISOString().replace(/:/g, '').slice(0, 15).replace('T', '-')
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true })
  writeFileSync(join(import.meta.dirname, 'results', `${stamp}-tracing.json`), JSON.stringify(result, null, 2) + '\n')
  writeFileSync(join(import.meta.dirname, 'results', `${stamp}-tracing.md`), lines.join('\n'))
  console.log(`wrote bench/results/${stamp}-tracing.md`)
} finally {
  await cleanUp()
}
