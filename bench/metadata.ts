// What a figure depends on, recorded beside it: the machine, the node binary, PostgreSQL,
// the data, the settings and the commit measured.
import { execFileSync } from 'node:child_process'
import { cpus, totalmem } from 'node:os'
import pg from 'pg'
import type { Dataset } from './dataset.js'
import type { BenchOptions } from './options.js'
import type { NodeBinary } from './servers.js'

export interface Metadata {
  date: string
  machine: { cpu: string, cores: number, memoryGiB: number }
  node: { version: string, binary: string }
  postgres: string
  dataset: { rows: Record<string, number>, bigJobScreens: number, smallJobScreens: number, hugeJobScreens: number, loadSeconds: number }
  settings: { quick: boolean, scale: number, rounds: number, durationSeconds: number, warmupSeconds: number, connections: number, poolSize: number }
  git: string
}

function gitCommit (): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain'], { encoding: 'utf8' }).trim() !== ''
    return dirty ? `${commit} (dirty)` : commit
  } catch {
    return 'unknown'
  }
}

export async function postgresVersion (url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<{ version: string }>('SELECT version()')).rows[0]!.version
  } finally {
    await client.end()
  }
}

export function metadata (options: BenchOptions, node: NodeBinary, postgres: string, dataset: Dataset, poolSize: number): Metadata {
  const cpu = cpus()
  return {
    date: new Date().toISOString(),
    machine: { cpu: cpu[0]?.model.trim() ?? 'unknown', cores: cpu.length, memoryGiB: Math.round(totalmem() / 2 ** 30 * 10) / 10 },
    node: { version: node.version, binary: node.source },
    postgres,
    dataset: { rows: dataset.rows, bigJobScreens: dataset.bigJobScreens, smallJobScreens: dataset.smallJobScreens, hugeJobScreens: dataset.hugeJobScreens, loadSeconds: Math.round(dataset.loadSeconds * 10) / 10 },
    settings: { quick: options.quick, scale: options.scale, rounds: options.rounds, durationSeconds: options.duration, warmupSeconds: options.warmup, connections: options.connections, poolSize },
    git: gitCommit(),
  }
}

export function describe (m: Metadata): string[] {
  const rows = Object.entries(m.dataset.rows).map(([t, n]) => `${t} ${n.toLocaleString('en-US')}`).join(', ')
  return [
    `machine: ${m.machine.cpu}, ${m.machine.cores} cores, ${m.machine.memoryGiB} GiB`,
    `node: ${m.node.version} (${m.node.binary}), for the service, the baseline, the ceiling and autocannon`,
    `postgres: ${m.postgres}`,
    `dataset: ${rows}; huge job ${m.dataset.hugeJobScreens.toLocaleString('en-US')} screens, big job ${m.dataset.bigJobScreens.toLocaleString('en-US')}, small job ${m.dataset.smallJobScreens} (loaded in ${m.dataset.loadSeconds} s)`,
    `settings: ${m.settings.rounds} round(s) of ${m.settings.durationSeconds} s per measurement after ${m.settings.warmupSeconds} s of warm-up, ${m.settings.connections} connections, pool ${m.settings.poolSize}, scale ${m.settings.scale}${m.settings.quick ? ', quick' : ''}`,
    `git: ${m.git}`,
  ]
}
