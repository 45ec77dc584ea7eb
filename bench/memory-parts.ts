// Where the service's memory goes at rest (issue 42): a ladder of processes on the production
// build, each loading one part more than the one before (bench/memory-rung.mjs), measured
// after forced collections; each rung's figure is the median of three processes. The
// difference between rungs is what that part holds. With the flags the image runs with
// (bench/servers.ts, PRODUCTION_NODE_FLAGS) and without them.
// BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npm run bench:memory-parts
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cleanUp, cleanUpOnSignals } from './cleanup.js'
import { median } from './report.js'
import { buildService, nodeBinary, PRODUCTION_NODE_FLAGS } from './servers.js'
import { createBenchDatabase } from './throwaway-database.js'

const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
if (serverUrl === undefined) { console.error('BENCH_DATABASE_URL is required'); process.exit(2) }
const RUNG = join(import.meta.dirname, 'memory-rung.mjs')
const RUNGS = 8

interface Figures { name: string, rss: number, heapUsed: number, heapTotal: number, external: number }

cleanUpOnSignals()
try {
  const node = nodeBinary()
  await buildService()
  const db = await createBenchDatabase(serverUrl)
  const ladder = (flags: string[]): Figures[] => Array.from({ length: RUNGS }, (_, rung) => {
    const runs = [0, 1, 2].map(() => JSON.parse(execFileSync(node.path, ['--expose-gc', ...flags, RUNG, String(rung)], { env: { PATH: process.env.PATH, DATABASE_URL: db.apiUrl }, encoding: 'utf8' })) as Figures)
    return { name: runs[0]!.name, rss: median(runs.map(r => r.rss)), heapUsed: median(runs.map(r => r.heapUsed)), heapTotal: median(runs.map(r => r.heapTotal)), external: median(runs.map(r => r.external)) }
  })
  const plain = ladder([])
  const tuned = ladder(PRODUCTION_NODE_FLAGS)
  const rows = plain.map((p, i) => {
    const delta = (figures: Figures[], f: keyof Omit<Figures, 'name'>): string => (i === 0 ? figures[i]![f] : figures[i]![f] - figures[i - 1]![f]).toFixed(1)
    return `| ${p.name} | ${delta(plain, 'rss')} | ${delta(plain, 'heapUsed')} | ${delta(plain, 'heapTotal')} | ${delta(plain, 'external')} | ${delta(tuned, 'rss')} | ${p.rss.toFixed(0)} / ${tuned[i]!.rss.toFixed(0)} |`
  })
  const table = [
    `| part (each rung adds it to the one above) | RSS | V8 heap used | V8 heap reserved | external | RSS, with ${PRODUCTION_NODE_FLAGS.join(' ')} | RSS in all, plain / with the flags |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ]
  console.log(table.join('\n'))
  const stamp = new Date().toISOString().replace(/:/g, '').slice(0, 15).replace('T', '-')
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true })
  writeFileSync(join(import.meta.dirname, 'results', `${stamp}-memory-parts.md`), [`# Memory by part, at rest, ${new Date().toISOString()}`, '', `Node ${node.version}, the production build; MB, medians of three processes per rung, after two forced collections.`, '', ...table, ''].join('\n'))
  console.log(`wrote bench/results/${stamp}-memory-parts.md`)
} finally {
  await cleanUp()
}
