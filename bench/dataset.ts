// Loads the dataset into the bench database, as its owner, and reports what it holds.
import pg from 'pg'
import { generateApiKey } from '../src/auth/api-keys.js'
import { BIG_JOB_ID, datasetSize, datasetStatements, HUGE_JOB_ID, PRO_USER_ID, SMALL_JOB_ID, type DatasetSize } from './dataset-sql.js'

export interface Dataset {
  size: DatasetSize
  /** A key of a user of the Pro organization. */
  apiKey: string
  bigJobId: string
  smallJobId: string
  hugeJobId: string
  rows: Record<string, number>
  bigJobScreens: number
  smallJobScreens: number
  hugeJobScreens: number
  loadSeconds: number
}

const TABLES = ['organizations', 'users', 'api_keys', 'jobs', 'questions', 'screens', 'job_screen_stats', 'job_completion_segments', 'job_completion_boundaries'] as const

export async function loadDataset (url: string, quick: boolean, scale: number): Promise<Dataset> {
  const size = datasetSize(quick, scale)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const started = performance.now()
    const step = async (label: string, sql: string): Promise<void> => {
      const t0 = performance.now()
      await client.query(sql)
      console.log(`  ${label}: ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    }
    // The summaries' row triggers would dominate a set-based load of millions of screens:
    // load with them off, then build the summaries as the migration's backfill does.
    await step('summary triggers off', 'ALTER TABLE screens DISABLE TRIGGER USER')
    for (const { label, sql } of datasetStatements(size)) await step(label, sql)
    await step('summary triggers on', 'ALTER TABLE screens ENABLE TRIGGER USER')
    await step('summaries (the migration\'s backfill)', 'SELECT rebuild_screen_summaries()')
    // The change log's first prune collapses the load's rows, in a transaction of its own.
    // Left to the service's timer (its first run is SYNC_PRUNE_INTERVAL_MS after start) it
    // could fall between the two servers' answers to the equality check, whose list cursors
    // carry the snapshot: one more transaction id, cursors that differ.
    await step('change log collapsed, as the service\'s prune does', 'SELECT prune_job_changes(3600)')
    const key = generateApiKey()
    await client.query('INSERT INTO api_keys (user_id, name, prefix, hash) VALUES ($1, $2, $3, $4)', [PRO_USER_ID, 'bench', key.prefix, Buffer.from(key.hash)])
    // As autovacuum would leave it: statistics, and the visibility map index-only scans need.
    const t0 = performance.now()
    await client.query('VACUUM ANALYZE')
    console.log(`  VACUUM ANALYZE: ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    const loadSeconds = (performance.now() - started) / 1000

    const counted = await client.query<Record<string, number>>(`SELECT ${TABLES.map(t => `(SELECT count(*)::int FROM ${t}) AS ${t}`).join(', ')}`)
    const special = await client.query<{ big: number, small: number, huge: number }>(
      `SELECT (SELECT count(*)::int FROM screens WHERE job_id = $1) AS big, (SELECT count(*)::int FROM screens WHERE job_id = $2) AS small,
              (SELECT count(*)::int FROM screens WHERE job_id = $3) AS huge`,
      [BIG_JOB_ID, SMALL_JOB_ID, HUGE_JOB_ID])
    return {
      size,
      apiKey: key.key,
      bigJobId: BIG_JOB_ID,
      smallJobId: SMALL_JOB_ID,
      hugeJobId: HUGE_JOB_ID,
      rows: counted.rows[0]!,
      bigJobScreens: special.rows[0]!.big,
      smallJobScreens: special.rows[0]!.small,
      hugeJobScreens: special.rows[0]!.huge,
      loadSeconds,
    }
  } finally {
    await client.end()
  }
}
