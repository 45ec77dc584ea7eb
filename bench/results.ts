// The results files: JSON (every measurement, for later comparison) and Markdown (the table
// and what it was measured on). A full run's go to bench/results/ and are committed; a
// quick run's to test-output/ (a CI smoke test, not figures to keep).
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, type Metadata } from './metadata.js'
import { costMarkdownTable, markdownTable, type CostRow, type Figures, type Row } from './report.js'
import type { Runs } from './rounds.js'
import { sizeMarkdownTable, type SizeRow } from './size.js'
import { SYNC_FACTOR, syncMarkdownTable, type SyncRow } from './sync-pages.js'
import { bulkLoadMarkdown, type BulkLoadResult } from './bulk-load.js'
import { verifyStatsMarkdown, type VerifyStatsRun } from './verify-stats.js'
import { writesMarkdownTable, type WriteRow } from './writes.js'

/** The summaries' upkeep, measured after the reads (issue 21). */
export interface Upkeep { writeDeadlocks: number, verify: VerifyStatsRun, bulk: BulkLoadResult }

const ROOT = join(import.meta.dirname, '..')

function basePath (quick: boolean, date: Date): string {
  if (quick) return join(ROOT, 'test-output/bench-quick')
  const pad = (n: number): string => String(n).padStart(2, '0')
  const stamp = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}-${pad(date.getHours())}${pad(date.getMinutes())}`
  return join(ROOT, 'bench/results', stamp)
}

export async function writeResults (meta: Metadata, table: Row[], ceiling: Figures, runs: Runs, notes: string[], cost: CostRow[], writes: WriteRow[], size: SizeRow[], sync: SyncRow[], upkeep: Upkeep): Promise<string[]> {
  const base = basePath(meta.settings.quick, new Date(meta.date))
  await mkdir(join(base, '..'), { recursive: true })
  const json = {
    ...meta,
    notes,
    table,
    ceiling,
    cost,
    size,
    sync,
    writes,
    upkeep,
    runs: {
      scenarios: runs.scenarios.map(s => ({ scenario: s.scenario.name, target: s.scenario.target, requests: s.scenario.requests, service: s.runs.service, baseline: s.runs.baseline })),
      ceiling: runs.ceiling,
    },
  }
  const markdown = [
    `# Benchmark ${meta.date}`,
    '',
    'Service (`node dist/server.js`, production settings) against the hand-written baseline (`bench/baseline/`: node:http + pg, one statement per answer) on the same data, database role and pool. Medians over rounds; ratio = service req/s ÷ baseline req/s.',
    '',
    markdownTable(table, ceiling),
    '',
    'What a job\'s size costs: the latency of a large job\'s request ÷ the 200-screen job\'s, on each server (medians over rounds; the mean is judged, percentiles are whole milliseconds).',
    '',
    sizeMarkdownTable(size),
    '',
    `What a sync page costs: the first page of 10 of a sync whose token was made before the organization's jobs were all created, ÷ a list page of 10 of the same organization, on the service (medians over rounds; the mean is judged: within ${SYNC_FACTOR}×).`,
    '',
    syncMarkdownTable(sync),
    '',
    'What a request costs: CPU time of the server process and of PostgreSQL during the measurements, per request (medians over rounds); per core = 1000 ÷ CPU ms.',
    '',
    costMarkdownTable(cost),
    '',
    `Write throughput of screens, ${meta.settings.connections} writers, one statement per transaction, with the summaries' triggers, without them (disabled), and with only the floor hook (a row trigger appending a constant row into a table indexed like the deltas: the least any design that records a write in the writer's transaction pays), interleaved in an order rotating each round; medians over rounds. One job: the 100k-screen job; many jobs: one of all jobs at random per statement.`,
    '',
    writesMarkdownTable(writes),
    '',
    `Deadlocks PostgreSQL counted during the writes: ${upkeep.writeDeadlocks}.`,
    '',
    verifyStatsMarkdown(upkeep.verify),
    '',
    bulkLoadMarkdown(upkeep.bulk),
    '',
    ...describe(meta).map(l => `- ${l}`),
    ...notes.map(n => `- ${n}`),
    '',
  ].join('\n')
  await writeFile(`${base}.json`, JSON.stringify(json, null, 2) + '\n')
  await writeFile(`${base}.md`, markdown)
  return [`${base}.json`, `${base}.md`]
}
