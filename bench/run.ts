// npm run bench [-- --quick] [--scale N] [--rounds N] [--duration s] [--connections N] [--only name]
// The one place performance is measured: the service as production runs it against a
// hand-written baseline of the same answers, on a throwaway database with a deterministic
// dataset, after checking that both answer byte for byte alike. See bench/README.md.
import { relative } from 'node:path'
import { cleanUp, cleanUpOnSignals, interrupted } from './cleanup.js'
import { loadDataset } from './dataset.js'
import { checkEquality, EqualityError } from './equality.js'
import { describe, metadata, postgresVersion } from './metadata.js'
import { parseOptions, USAGE, UsageError, type BenchOptions } from './options.js'
import { costRows, costTextTable, figures, P99_FACTOR, rows, textTable } from './report.js'
import { writeResults } from './results.js'
import { runRounds } from './rounds.js'
import { pathsOf, scenarios } from './scenarios.js'
import { buildService, nodeBinary, POOL_SIZE, startBaseline, startCeiling, startService } from './servers.js'
import { sizeMarkdownTable, sizeRows } from './size.js'
import { prepareSyncScenario, removeSyncScenario, syncMarkdownTable, syncRows, syncScenarios, type SyncSetup } from './sync-pages.js'
import { createBenchDatabase } from './throwaway-database.js'
import { bulkLoadMarkdown, measureBulkLoad } from './bulk-load.js'
import { timeVerifyStats, verifyStatsMarkdown } from './verify-stats.js'
import { databaseDeadlocks, measureWrites, WRITE_SCENARIOS, writesMarkdownTable } from './writes.js'

const seconds = (since: number): string => `${((performance.now() - since) / 1000).toFixed(1)} s`

async function bench (options: BenchOptions): Promise<void> {
  const started = performance.now()
  const node = nodeBinary()
  console.log(`node for every process: ${node.version} (${node.source}: ${node.path})`)

  console.log('== database')
  const db = await createBenchDatabase(options.serverUrl)
  const postgres = await postgresVersion(db.url)
  console.log(`  ${db.name}, migrated, role of the servers: ${new URL(db.apiUrl).username}`)

  console.log(`== dataset (${options.quick ? 'quick' : 'full'}, scale ${options.scale})`)
  const dataset = await loadDataset(db.url, options.quick, options.scale)
  console.log(`  loaded in ${dataset.loadSeconds.toFixed(1)} s: ${Object.entries(dataset.rows).map(([t, n]) => `${t} ${n}`).join(', ')}`)
  console.log(`  big job ${dataset.bigJobId}: ${dataset.bigJobScreens} screens; small job ${dataset.smallJobId}: ${dataset.smallJobScreens} screens`)

  console.log('== servers')
  let t0 = performance.now()
  await buildService()
  console.log(`  npm run build: ${seconds(t0)}`)
  const service = await startService(node, db.apiUrl)
  const baseline = await startBaseline(node, db.apiUrl)
  const ceiling = await startCeiling(node)
  console.log(`  service ${service.url}, baseline ${baseline.url}, ceiling ${ceiling.url}`)

  console.log('== body equality')
  const paths = pathsOf(dataset)
  const probe = await checkEquality({ service: service.url, baseline: baseline.url }, dataset.apiKey, paths)

  console.log(`== load: ${options.rounds} round(s), ${options.duration} s per measurement after ${options.warmup} s of warm-up, ${options.connections} connections`)
  t0 = performance.now()
  const picked = (name: string): boolean => options.only.length === 0 || options.only.some(part => name.includes(part))
  // The sync pages' organization, after the equality check (its jobs are created after its
  // token, through the service's walk).
  let syncSetup: SyncSetup | undefined
  if (['sync page', 'list page (10)'].some(picked)) {
    t0 = performance.now()
    syncSetup = await prepareSyncScenario(db.url, service.url, options.syncChanged)
    console.log(`== sync pages: a token, then ${syncSetup.changed} jobs created after it, in ${seconds(t0)}`)
  }
  const chosen = [...scenarios(paths, probe), ...(syncSetup !== undefined ? syncScenarios(syncSetup) : [])].filter(s => picked(s.name))
  const chosenWrites = WRITE_SCENARIOS.filter(s => picked(s.name))
  if (chosen.length === 0 && chosenWrites.length === 0) throw new UsageError(`--only ${options.only.join(', ')}: no scenario has that in its name`)
  const runs = await runRounds(node, { service, baseline, ceiling }, chosen, {
    rounds: options.rounds, duration: options.duration, warmup: options.warmup, connections: options.connections, apiKey: dataset.apiKey,
  })
  console.log(`  measured in ${seconds(t0)}`)
  if (syncSetup !== undefined) await removeSyncScenario(db.url, syncSetup)

  // Before the writes, which leave the summaries stale (triggers off half the time).
  console.log('== verify-stats (the drift check, on the whole database)')
  const verify = await timeVerifyStats(node, db.url)
  console.log(`  ${verifyStatsMarkdown(verify)}`)

  // Last: the writes add screens and, with the triggers off, leave the summaries stale.
  const writeSeconds = options.quick ? 1 : 5
  console.log(`== writes: ${chosenWrites.length} workload(s), the summaries' triggers, the floor hook and none in turn, ${options.rounds} round(s) of ${writeSeconds} s, ${options.connections} writers`)
  const deadlocksBefore = await databaseDeadlocks(db.url)
  const writes = await measureWrites(node, db.url, dataset.bigJobId, chosenWrites, { rounds: options.rounds, seconds: writeSeconds, connections: options.connections })
  await new Promise(resolve => setTimeout(resolve, 1500)) // the writers' counts reach pg_stat_database
  const writeDeadlocks = (await databaseDeadlocks(db.url)) - deadlocksBefore
  console.log(`  deadlocks during the writes: ${writeDeadlocks}`)

  const bulkScreens = options.quick ? 10_000 : 1_000_000
  console.log(`== bulk load: ${bulkScreens} screens in one INSERT … SELECT, summaries kept and not`)
  const bulk = await measureBulkLoad(db.url, dataset.smallJobId, bulkScreens)
  console.log(bulkLoadMarkdown(bulk))

  const table = rows(runs)
  const ceilingFigures = figures(runs.ceiling)
  const meta = metadata(options, node, postgres, dataset, POOL_SIZE)
  const notes = [
    `medians over ${options.rounds} round(s); ratio = service req/s ÷ baseline req/s; p99 check: service p99 ≤ ${P99_FACTOR} × baseline p99`,
    'load generator, servers and PostgreSQL share the machine: figures are noisy, compare ratios rather than absolute rates',
  ]
  if (options.quick) notes.push('quick run: small data and short measurements, a smoke test of the harness (no thresholds)')
  if (options.only.length > 0) notes.push(`partial run (--only ${options.only.join(', ')}): for iterating; quote full runs`)
  const cost = costRows(runs)
  const size = sizeRows(runs)
  const sync = syncRows(runs, syncSetup)
  console.log(`\n${textTable(table, ceilingFigures)}\n`)
  console.log(`What a job's size costs: latency of the large job's request ÷ the 200-screen job's (medians):\n${sizeMarkdownTable(size)}\n`)
  console.log(`What a sync page costs: the first page of 10 of a sync with many jobs changed ÷ a list page of 10 (medians):\n${syncMarkdownTable(sync)}\n`)
  console.log(`What a request costs (CPU of each process during the measurements; the load generator excluded):\n${costTextTable(cost)}\n`)
  console.log(`Write throughput of screens with the summaries' triggers, the floor hook and none (medians):\n${writesMarkdownTable(writes)}\n`)
  for (const line of [...describe(meta), ...notes]) console.log(line)
  const files = await writeResults(meta, table, ceilingFigures, runs, notes, cost, writes, size, sync, { writeDeadlocks, verify, bulk })
  console.log(`results: ${files.map(f => relative(process.cwd(), f)).join(', ')}`)
  console.log(`bench took ${seconds(started)}`)
}

cleanUpOnSignals()
let exitCode = 0
try {
  await bench(parseOptions(process.argv.slice(2), process.env))
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`${error.message}\n${USAGE}`)
    exitCode = 2
  } else if (error instanceof EqualityError) {
    console.error(`\nThe service and the baseline do not answer alike; nothing was measured.\n${error.message}`)
    exitCode = 1
  } else if (interrupted() === undefined) {
    console.error(error)
    exitCode = 1
  }
} finally {
  await cleanUp()
}
process.exit(interrupted() ?? exitCode)
