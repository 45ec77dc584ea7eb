// Write throughput of screens with and without the summaries' triggers (issue 13): 16
// writers inserting or updating the screens of one job and of many jobs, each workload
// measured in three configurations every round, in an order that rotates from round to
// round (each run leaves dead rows that slow the next): the summaries' triggers; none; and
// the floor, the cheapest hook that appends anything (below). It runs after the read
// scenarios: it adds screens and, with the triggers off, leaves the summaries stale.
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { median } from './report.js'
import { startChild } from './processes.js'
import type { NodeBinary } from './servers.js'
import type { Workload, WriterOptions } from './writer.js'

const WRITER = join(import.meta.dirname, 'writer.ts')

export interface WriteScenario { name: string, workload: Workload, scope: 'one job' | 'many jobs' }
export const WRITE_SCENARIOS: WriteScenario[] = [
  { name: 'insert a completed screen, one job', workload: 'insert', scope: 'one job' },
  { name: 'insert a completed screen, many jobs', workload: 'insert', scope: 'many jobs' },
  { name: 'update a score, one job', workload: 'update score', scope: 'one job' },
  { name: 'update a score, many jobs', workload: 'update score', scope: 'many jobs' },
]

type Config = 'with' | 'floor' | 'without'
const CONFIGS: Config[] = ['with', 'floor', 'without']
const LABEL: Record<Config, string> = { with: 'triggers', floor: 'floor   ', without: 'none    ' }

export interface WriteRow {
  scenario: string
  withTriggers: number
  /** With only the floor hook. */
  floor: number
  withoutTriggers: number
  ratio: number
  /** With the triggers ÷ with the floor hook: issue 42's goal (at least 0.9). */
  ofFloor: number
  floorRatio: number
  runs: Record<Config, number[]>
}

// The floor hook (bench/write-floor.sql): a row trigger appending a constant row into a table
// shaped and indexed like the deltas.
const FLOOR_SETUP = readFileSync(join(import.meta.dirname, 'write-floor.sql'), 'utf8')
const FLOOR_TEARDOWN = 'DROP TRIGGER IF EXISTS bench_write_floor ON screens; DROP FUNCTION IF EXISTS bench_write_floor(); DROP TABLE IF EXISTS bench_write_floor'
const CONFIG_SQL: Record<Config, string> = {
  with: 'ALTER TABLE screens ENABLE TRIGGER USER; ALTER TABLE screens DISABLE TRIGGER bench_write_floor',
  floor: 'ALTER TABLE screens DISABLE TRIGGER USER; ALTER TABLE screens ENABLE TRIGGER bench_write_floor',
  without: 'ALTER TABLE screens DISABLE TRIGGER USER',
}

async function runWriter (node: NodeBinary, options: WriterOptions): Promise<number> {
  const child = startChild('writer', node.path, ['--import', 'tsx', WRITER], { stdio: ['pipe', 'pipe', 'inherit'] })
  child.process.stdin!.end(JSON.stringify(options))
  let out = ''
  child.process.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const [code] = await once(child.process, 'exit') as [number | null]
  await child.stop()
  if (code !== 0) throw new Error(`writer exited with code ${code}`)
  const { transactions, seconds } = JSON.parse(out) as { transactions: number, seconds: number }
  return transactions / seconds
}

export async function measureWrites (node: NodeBinary, ownerUrl: string, oneJobId: string, chosen: WriteScenario[], settings: { rounds: number, seconds: number, connections: number }): Promise<WriteRow[]> {
  const client = new pg.Client({ connectionString: ownerUrl })
  await client.connect()
  try {
    const jobIds = (await client.query<{ id: string }>('SELECT id FROM jobs')).rows.map(r => r.id)
    const oneJobScreens = (await client.query<{ id: string }>("SELECT id FROM screens WHERE job_id = $1 AND status = 'completed' LIMIT 10000", [oneJobId])).rows.map(r => r.id)
    const anyScreens = (await client.query<{ id: string }>("SELECT id FROM screens TABLESAMPLE SYSTEM (2) REPEATABLE (1) WHERE status = 'completed' LIMIT 20000")).rows.map(r => r.id)
    const runs = chosen.map((): Record<Config, number[]> => ({ with: [], floor: [], without: [] }))
    await client.query(FLOOR_SETUP)
    try {
      for (let r = 1; r <= settings.rounds; r++) {
        const order = CONFIGS.map((_, k) => CONFIGS[(k + r - 1) % CONFIGS.length]!)
        for (const [i, scenario] of chosen.entries()) {
          for (const config of order) {
            await client.query(CONFIG_SQL[config])
            const tps = await runWriter(node, {
              url: ownerUrl,
              workload: scenario.workload,
              jobIds: scenario.scope === 'one job' ? [oneJobId] : jobIds,
              screenIds: scenario.scope === 'one job' ? oneJobScreens : anyScreens,
              connections: settings.connections,
              seconds: settings.seconds,
            })
            runs[i]![config].push(tps)
            console.log(`  [${r}/${settings.rounds}] ${scenario.name.padEnd(38)} ${LABEL[config]} ${tps.toFixed(0).padStart(6)} tx/s`)
          }
        }
      }
    } finally {
      await client.query(`${FLOOR_TEARDOWN}; ALTER TABLE screens ENABLE TRIGGER USER`)
    }
    return chosen.map((scenario, i) => {
      const [withTriggers, floor, withoutTriggers] = CONFIGS.map(c => median(runs[i]![c]))
      return { scenario: scenario.name, withTriggers: withTriggers!, floor: floor!, withoutTriggers: withoutTriggers!, ratio: withTriggers! / withoutTriggers!, ofFloor: withTriggers! / floor!, floorRatio: floor! / withoutTriggers!, runs: runs[i]! }
    })
  } finally {
    await client.end()
  }
}

export function writesMarkdownTable (rows: WriteRow[]): string {
  return [
    '| writes (16 writers) | with triggers (tx/s) | floor hook (tx/s) | without (tx/s) | with ÷ without | with ÷ floor (goal ≥ 0.90) | floor ÷ without |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(r => `| ${r.scenario} | ${r.withTriggers.toFixed(0)} | ${r.floor.toFixed(0)} | ${r.withoutTriggers.toFixed(0)} | ${r.ratio.toFixed(2)} | ${r.ofFloor.toFixed(2)} | ${r.floorRatio.toFixed(2)} |`),
  ].join('\n')
}

/** Deadlocks PostgreSQL has counted in the database (a backend's count arrives when it exits). */
export async function databaseDeadlocks (url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return Number((await client.query<{ n: string }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()')).rows[0]!.n)
  } finally {
    await client.end()
  }
}
