// Where a request's Node CPU goes (issue 42): the service's build and the baseline, each
// started with --cpu-prof, loaded with one scenario of the quick dataset (16 connections,
// `--seconds`), then stopped; the profiles' self time by function and by package, per
// request. The .cpuprofile files stay in bench/results/profiles/ for a flame graph (Chrome's
// DevTools, speedscope).
// BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npm run bench:profile [-- --scenario smallAnalytics --seconds 20 --top 30]
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cleanUp, cleanUpOnSignals } from './cleanup.js'
import { loadDataset } from './dataset.js'
import { measure } from './load.js'
import { pathsOf, type Paths } from './scenarios.js'
import { buildService, nodeBinary, startBaseline, startService, type Server } from './servers.js'
import { createBenchDatabase } from './throwaway-database.js'

const { values } = parseArgs({ options: { scenario: { type: 'string' }, seconds: { type: 'string' }, top: { type: 'string' } } })
const SCENARIO = (values.scenario ?? 'smallAnalytics') as keyof Paths
const SECONDS = Number(values.seconds ?? 20)
const TOP = Number(values.top ?? 30)
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
if (serverUrl === undefined) { console.error('BENCH_DATABASE_URL is required'); process.exit(2) }

interface ProfileNode { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }
interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas: number[] }

/** Where a frame's code lives: a package, the app's own file, node's internals, or V8's (GC, idle, program). */
function placeOf (url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)'
  const inModules = url.lastIndexOf('node_modules/')
  if (inModules !== -1) {
    const rest = url.slice(inModules + 'node_modules/'.length).split('/')
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  if (url.startsWith('node:')) return 'node internals'
  const inApp = url.search(/\/(dist|src|bench)\//)
  return inApp === -1 ? url : url.slice(inApp + 1)
}

/** Self time in µs by frame and by place, from a profile's samples. */
function selfTimes (profile: Profile): { frames: Map<string, number>, places: Map<string, number>, totalUs: number } {
  const byId = new Map(profile.nodes.map(n => [n.id, n]))
  const frames = new Map<string, number>()
  const places = new Map<string, number>()
  let totalUs = 0
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!
    const us = profile.timeDeltas[i] ?? 0
    const { functionName, url, lineNumber } = node.callFrame
    const place = placeOf(url, functionName)
    if (place === '(idle)') return
    totalUs += us
    const frame = `${functionName === '' ? '(anonymous)' : functionName} ${place}${url === '' ? '' : `:${lineNumber + 1}`}`
    frames.set(frame, (frames.get(frame) ?? 0) + us)
    places.set(place, (places.get(place) ?? 0) + us)
  })
  return { frames, places, totalUs }
}

function table (title: string, entries: Map<string, number>, requests: number, totalUs: number, top: number): string[] {
  const rows = [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)
  return [`| ${title} | µs per request | share |`, '|---|---:|---:|', ...rows.map(([k, us]) => `| ${k.replace(/\|/g, '\\|')} | ${(us / requests).toFixed(1)} | ${(100 * us / totalUs).toFixed(1)}% |`)]
}

cleanUpOnSignals()
try {
  const node = nodeBinary()
  await buildService()
  const db = await createBenchDatabase(serverUrl)
  const dataset = await loadDataset(db.url, true, 1)
  const path = pathsOf(dataset)[SCENARIO]
  if (typeof path !== 'string') throw new Error(`no scenario path ${SCENARIO}`)
  const dir = join(import.meta.dirname, 'results', 'profiles')
  const report: string[] = [`# CPU profile of ${SCENARIO} (${path.replace(/[0-9a-f-]{36}/g, '…')}), ${new Date().toISOString()}`, '', `Node ${node.version}; the quick dataset; 16 connections, ${SECONDS} s; self time of the server process (idle excluded), per request.`, '']
  for (const side of ['service', 'baseline'] as const) {
    const sideDir = join(dir, side)
    rmSync(sideDir, { recursive: true, force: true })
    mkdirSync(sideDir, { recursive: true })
    const cpuProf = `--cpu-prof --cpu-prof-dir=${sideDir}`
    const server: Server = side === 'service'
      ? await startService(node, db.apiUrl, { NODE_OPTIONS: cpuProf })
      : await startBaseline(node, db.apiUrl, { NODE_OPTIONS: cpuProf })
    const m = await measure(node, server.url, [{ path }], { seconds: SECONDS, connections: 16, headers: { authorization: `Bearer ${dataset.apiKey}` } })
    if (m.bad > 0) throw new Error(`${side}: ${m.bad} bad answers (${JSON.stringify(m.statusCodes)})`)
    await server.child.stop()
    const file = readdirSync(sideDir).find(f => f.endsWith('.cpuprofile'))
    if (file === undefined) throw new Error(`${side} wrote no profile`)
    const { frames, places, totalUs } = selfTimes(JSON.parse(readFileSync(join(sideDir, file), 'utf8')) as Profile)
    // The profile covers start-up and warm-up too: per request is an upper bound, the shares are what to compare.
    console.log(`${side}: ${m.requestsPerSecond.toFixed(0)} req/s, ${m.total} requests, ${(totalUs / m.total).toFixed(1)} µs of CPU in the profile per request`)
    report.push(`## ${side}: ${m.requestsPerSecond.toFixed(0)} req/s, ${(totalUs / m.total).toFixed(1)} µs per request (start-up included)`, '', ...table('place', places, m.total, totalUs, 15), '', ...table('function', frames, m.total, totalUs, TOP), '')
  }
  console.log(report.join('\n'))
  const stamp = new Date().toISOString().replace(/:/g, '').slice(0, 15).replace('T', '-')
  writeFileSync(join(import.meta.dirname, 'results', `${stamp}-profile-${SCENARIO}.md`), report.join('\n'))
  console.log(`wrote bench/results/${stamp}-profile-${SCENARIO}.md`)
} finally {
  await cleanUp()
}
