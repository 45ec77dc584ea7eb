import type { Prisma } from '../db/database.js'
import { FOLD_BATCH, foldBatch } from '../db/summary-fold.js'
import { clientReader } from '../db/sql-reader.js'

// The drift check of the screen summaries (job_screen_stats, job_completion_segments,
// job_completion_boundaries, plus the deltas not yet folded into them): writers' triggers and
// the fold keep them exact, so a difference means someone wrote them by hand, disabled a
// trigger, or restored a partial backup. Recomputing from the screens is the only truth. The
// SQL it runs is defined in migration 20261123200000_summary_deltas (expected_* and stored_*
// functions, screen_summary_corrections).

export interface StatsDrift {
  /** Jobs whose per-job figures differ from their screens'. */
  jobs: number
  /** (job, segment) pairs whose completion figures differ. */
  segments: number
  /** (job, boundary window, quarter hour) triples whose completion figures differ. */
  quarters: number
  /** Rows a reader would misread: boundary rows out of order or out of shape, segments off a segment's start. */
  malformed: number
  /** The jobs concerned, at most 100. */
  jobIds: string[]
}

export interface VerifyStatsResult {
  jobsChecked: number
  drift: StatsDrift
  /** With `fix`: the jobs repaired (at most 100 listed); their summaries then match their screens. */
  repaired: string[]
  /** With `fix`: how many jobs were repaired. */
  repairedCount: number
  seconds: number
}

export interface VerifyStatsOptions {
  fix?: boolean
  /** Jobs compared per statement. */
  batchSize?: number
  /** A bound on the whole run, in milliseconds; none when absent. */
  timeoutMs?: number
  /** Told after each batch. */
  onProgress?: (progress: { jobsChecked: number, jobsTotal: number, drifted: number, seconds: number }) => void
}

export class VerifyStatsTimeout extends Error {}

const LISTED = 100

// One statement per batch of jobs, so its summaries and its screens are read in one snapshot:
// a writer's screens and its deltas commit together, so concurrent writes cannot show up as
// drift. Slots and deltas are summed; a missing row and a row of zeros are the same figures.
const DRIFT = `
  WITH stats AS (
    SELECT coalesce(e.job_id, s.job_id) AS job_id
    FROM expected_job_screen_stats($1::uuid[]) e
    FULL JOIN stored_job_screen_stats($1::uuid[]) s ON s.job_id = e.job_id
    WHERE (coalesce(s.in_progress, 0), coalesce(s.completed, 0), coalesce(s.expired, 0), coalesce(s.scored, 0), coalesce(s.score_sum, 0))
          <> (coalesce(e.in_progress, 0), coalesce(e.completed, 0), coalesce(e.expired, 0), coalesce(e.scored, 0), coalesce(e.score_sum, 0))
  ), buckets AS (
    -- A damaged running total shows up in its quarter hour (and, with the opposite sign, in
    -- the next one's).
    SELECT coalesce(e.job_id, s.job_id) AS job_id,
           coalesce(s.kind, CASE WHEN (completion_place(e.bucket)).window_start IS NULL THEN 'segment' ELSE 'quarter' END) AS kind
    FROM expected_job_completion_buckets($1::uuid[]) e
    FULL JOIN stored_job_completion_buckets($1::uuid[]) s ON s.job_id = e.job_id AND s.bucket = e.bucket
    WHERE (coalesce(s.completed, 0), coalesce(s.scored, 0), coalesce(s.score_sum, 0))
          <> (coalesce(e.completed, 0), coalesce(e.scored, 0), coalesce(e.score_sum, 0))
  ), malformed AS (
    -- Out of order, the figures above may still add up while a zone's split reads the wrong
    -- running total.
    SELECT job_id FROM malformed_job_completion_boundaries($1::uuid[])
    UNION ALL
    SELECT job_id FROM malformed_job_completion_segments($1::uuid[])
  )
  SELECT (SELECT count(*)::int FROM stats) AS jobs,
         (SELECT count(*)::int FROM buckets WHERE kind = 'segment') AS segments,
         (SELECT count(*)::int FROM buckets WHERE kind = 'quarter') AS quarters,
         (SELECT count(*)::int FROM malformed) AS malformed,
         ARRAY(SELECT job_id::text FROM (SELECT job_id FROM stats UNION SELECT job_id FROM buckets UNION SELECT job_id FROM malformed) d
               ORDER BY job_id) AS job_ids`

type DriftRow = { jobs: number, segments: number, quarters: number, malformed: number, job_ids: string[] }

/** The fold's lock (migration 20261123200000_summary_deltas): no fold runs while a repair does. */
const FOLD_LOCK = '8146720561340517'

interface Deadline { at: number | undefined }

/** `statement_timeout` for what is left of the run, so that no statement outlives the bound. */
function remaining (deadline: Deadline): number {
  if (deadline.at === undefined) return 0
  const left = deadline.at - Date.now()
  if (left <= 0) throw new VerifyStatsTimeout('verify-stats ran out of time (--timeout)')
  return Math.max(1, Math.floor(left))
}

/** Runs `statements` in one transaction with the run's time limit (none by default). */
async function bounded<T> (prisma: Prisma, deadline: Deadline, body: (tx: Prisma) => Promise<T>): Promise<T> {
  return await prisma.$transaction(async tx => {
    await tx.$executeRawUnsafe(`SET LOCAL statement_timeout = ${remaining(deadline)}`)
    return await body(tx as unknown as Prisma)
  }, { timeout: 2 ** 31 - 1, maxWait: 60_000 }).catch((error: unknown) => {
    if (/statement timeout|canceling statement/i.test(String((error as Error).message))) throw new VerifyStatsTimeout('verify-stats ran out of time (--timeout)')
    throw error
  })
}

async function driftOf (prisma: Prisma, deadline: Deadline, jobIds: string[]): Promise<DriftRow> {
  return await bounded(prisma, deadline, async tx => (await tx.$queryRawUnsafe<DriftRow[]>(DRIFT, jobIds))[0]!)
}

/**
 * Makes the summaries of `jobIds` equal their screens, beside live writers: under the fold's
 * lock, malformed boundary rows are deleted, then one statement appends, as deltas, the
 * difference between what the screens say and what is stored, both read in its snapshot.
 * Writers keep appending their own deltas meanwhile; no screen is locked or read into Node.
 */
async function repair (prisma: Prisma, deadline: Deadline, jobIds: string[]): Promise<void> {
  await bounded(prisma, deadline, async tx => {
    await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${FOLD_LOCK})`)
    await tx.$executeRawUnsafe(`DELETE FROM job_completion_boundaries b USING malformed_job_completion_boundaries($1::uuid[]) m
      WHERE b.job_id = m.job_id AND b.window_start = m.window_start AND b.slot = m.slot`, jobIds)
    await tx.$executeRawUnsafe(`DELETE FROM job_completion_segments c USING malformed_job_completion_segments($1::uuid[]) m
      WHERE c.job_id = m.job_id AND c.segment = m.segment AND c.slot = m.slot`, jobIds)
    await tx.$executeRawUnsafe(`INSERT INTO screen_summary_deltas (job_id, bucket, in_progress, completed, expired, scored, score_sum, changed_at)
      SELECT job_id, bucket, in_progress, completed, expired, scored, score_sum, summaries_clock() FROM screen_summary_corrections($1::uuid[])`, jobIds)
    // Their weekly figures may have changed (a malformed window or segment dropped appends no
    // delta; the corrections' deltas are logged by the fold): a partner's next sync reports
    // them, to the keys that read analytics, each under the organization the fold reads once
    // this has committed, as a question's write, so that a job moving meanwhile is logged where
    // it ends up (docs/sync-design.md, "Moves").
    await tx.$executeRawUnsafe('SELECT log_job_changes_later($1::uuid[], true)', jobIds)
  })
}

const chunks = <T>(values: T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(values.length / size) }, (_, i) => values.slice(i * size, (i + 1) * size))

/**
 * Compares the summaries with a recomputation from the screens, a batch of jobs per
 * statement; with `fix`, repairs every job that differs, then checks those jobs again.
 */
export async function verifyScreenStats (prisma: Prisma, options: VerifyStatsOptions = {}): Promise<VerifyStatsResult> {
  const started = Date.now()
  const deadline: Deadline = { at: options.timeoutMs === undefined ? undefined : started + options.timeoutMs }
  const batchSize = options.batchSize ?? 100
  const seconds = (): number => (Date.now() - started) / 1000
  const allJobs = (await prisma.job.findMany({ select: { id: true }, orderBy: { id: 'asc' } })).map(j => j.id)

  const check = async (jobIds: string[], report: boolean): Promise<StatsDrift> => {
    const total: StatsDrift = { jobs: 0, segments: 0, quarters: 0, malformed: 0, jobIds: [] }
    let checked = 0
    for (const batch of chunks(jobIds, batchSize)) {
      const row = await driftOf(prisma, deadline, batch)
      total.jobs += row.jobs
      total.segments += row.segments
      total.quarters += row.quarters
      total.malformed += row.malformed
      total.jobIds.push(...row.job_ids)
      checked += batch.length
      if (report) options.onProgress?.({ jobsChecked: checked, jobsTotal: jobIds.length, drifted: total.jobIds.length, seconds: seconds() })
    }
    return total
  }

  const found = await check(allJobs, true)
  const listed = (drift: StatsDrift): StatsDrift => ({ ...drift, jobIds: drift.jobIds.slice(0, LISTED) })
  if (options.fix !== true || found.jobIds.length === 0) {
    return { jobsChecked: allJobs.length, drift: listed(found), repaired: [], repairedCount: 0, seconds: seconds() }
  }
  for (const batch of chunks(found.jobIds, batchSize)) await repair(prisma, deadline, batch)
  const after = await check(found.jobIds, false)
  return { jobsChecked: allJobs.length, drift: listed(after), repaired: found.jobIds.slice(0, LISTED), repairedCount: found.jobIds.length, seconds: seconds() }
}

/** True when the drift check found any kind of difference. */
export const hasDrift = (drift: StatsDrift): boolean =>
  drift.jobs > 0 || drift.segments > 0 || drift.quarters > 0 || drift.malformed > 0

/**
 * Folds the deltas (fold_screen_summary_deltas, batch after batch) until a batch comes back
 * short: none left, another fold holds the lock, or writers keep appending (it does not chase
 * them). For the admin command and tests; the API folds on a timer.
 */
export async function foldScreenStats (prisma: Prisma): Promise<number> {
  let total = 0
  for (;;) {
    const moved = await foldBatch(clientReader(prisma))
    total += moved
    if (moved < FOLD_BATCH) return total
  }
}
