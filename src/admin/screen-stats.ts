import type { Prisma } from '../db/database.js'

// The drift check of the screen summaries (job_screen_stats, job_completion_segments,
// job_completion_boundaries): the triggers keep them exact, so a difference means someone
// wrote them by hand, disabled a trigger, or restored a partial backup. Recomputing from the
// screens is the only truth.

export interface StatsDrift {
  /** Jobs whose per-job figures differ from their screens'. */
  jobs: number
  /** (job, segment) pairs whose completion figures differ. */
  segments: number
  /** (job, boundary window, quarter hour) triples whose completion figures differ. */
  quarters: number
  /** Boundary rows whose quarter hours are not strictly ascending from 0 to 103. */
  malformed: number
  /** The jobs concerned, at most 100. */
  jobIds: string[]
}

export interface VerifyStatsResult {
  jobsChecked: number
  drift: StatsDrift
  /** With `fix`: the jobs rebuilt; their summaries then match their screens. */
  repaired: string[]
}

// One statement, so the summaries and the screens are read in one snapshot: the triggers
// write both in the writer's transaction, so concurrent writes cannot show up as drift.
// Slots are summed; a missing row and a row of zeros are the same figures.
const DRIFT = `
  WITH stats AS (
    SELECT coalesce(a.job_id, e.job_id) AS job_id
    FROM (SELECT job_id, sum(in_progress) AS in_progress, sum(completed) AS completed, sum(expired) AS expired,
                 sum(scored) AS scored, sum(score_sum) AS score_sum
          FROM job_screen_stats GROUP BY job_id) a
    FULL JOIN expected_job_screen_stats() e ON e.job_id = a.job_id
    WHERE (coalesce(a.in_progress, 0), coalesce(a.completed, 0), coalesce(a.expired, 0), coalesce(a.scored, 0), coalesce(a.score_sum, 0))
          <> (coalesce(e.in_progress, 0), coalesce(e.completed, 0), coalesce(e.expired, 0), coalesce(e.scored, 0), coalesce(e.score_sum, 0))
  ), segments AS (
    SELECT coalesce(a.job_id, e.job_id) AS job_id
    FROM (SELECT job_id, segment, sum(completed) AS completed, sum(scored) AS scored, sum(score_sum) AS score_sum
          FROM job_completion_segments GROUP BY job_id, segment) a
    FULL JOIN expected_job_completion_segments() e ON e.job_id = a.job_id AND e.segment = a.segment
    WHERE (coalesce(a.completed, 0), coalesce(a.scored, 0), coalesce(a.score_sum, 0))
          <> (coalesce(e.completed, 0), coalesce(e.scored, 0), coalesce(e.score_sum, 0))
  ), quarters AS (
    -- The boundaries' running totals, each entry less the one before it: a damaged entry
    -- shows up in its quarter hour (and, with the opposite sign, in the next one's).
    SELECT coalesce(a.job_id, e.job_id) AS job_id
    FROM stored_job_completion_quarters() a
    FULL JOIN expected_job_completion_quarters() e ON e.job_id = a.job_id AND e.window_start = a.window_start AND e.quarter = a.quarter
    WHERE (coalesce(a.completed, 0), coalesce(a.scored, 0), coalesce(a.score_sum, 0))
          <> (coalesce(e.completed, 0), coalesce(e.scored, 0), coalesce(e.score_sum, 0))
  ), malformed AS (
    -- Out of order, the figures above may still add up while a zone's split reads the wrong
    -- running total.
    SELECT b.job_id FROM job_completion_boundaries b
    WHERE EXISTS (SELECT 1 FROM unnest(b.quarters) WITH ORDINALITY u(quarter, i)
                  WHERE u.quarter NOT BETWEEN 0 AND 103 OR u.quarter <= b.quarters[u.i - 1])
  )
  SELECT (SELECT count(*)::int FROM jobs) AS jobs_checked,
         (SELECT count(*)::int FROM stats) AS jobs,
         (SELECT count(*)::int FROM segments) AS segments,
         (SELECT count(*)::int FROM quarters) AS quarters,
         (SELECT count(*)::int FROM malformed) AS malformed,
         ARRAY(SELECT job_id::text FROM (SELECT job_id FROM stats UNION SELECT job_id FROM segments UNION SELECT job_id FROM quarters
                                         UNION SELECT job_id FROM malformed) d
               ORDER BY job_id LIMIT 100) AS job_ids`

async function findDrift (prisma: Prisma): Promise<{ jobsChecked: number, drift: StatsDrift }> {
  const [row] = await prisma.$queryRawUnsafe<Array<{ jobs_checked: number, jobs: number, segments: number, quarters: number, malformed: number, job_ids: string[] }>>(DRIFT)
  const { jobs, segments, quarters, malformed } = row!
  return { jobsChecked: row!.jobs_checked, drift: { jobs, segments, quarters, malformed, jobIds: row!.job_ids } }
}

/**
 * Rebuilds one job's summaries from its screens, with its writers kept out: the job row
 * locked FOR UPDATE stops new screens (their foreign key check needs a share lock on it),
 * its screens locked stop updates and deletes, and writers already under way are waited for.
 */
async function repairJob (prisma: Prisma, jobId: string): Promise<void> {
  await prisma.$transaction(async tx => {
    await tx.$queryRaw`SELECT 1 FROM jobs WHERE id = ${jobId}::uuid FOR UPDATE`
    await tx.$queryRaw`SELECT 1 FROM screens WHERE job_id = ${jobId}::uuid FOR UPDATE`
    await tx.$queryRaw`SELECT 1 FROM rebuild_screen_summaries(ARRAY[${jobId}::uuid])`
  }, { timeout: 120_000 })
}

/**
 * Compares the summaries with a recomputation from the screens; with `fix`, rebuilds the
 * jobs that differ (up to 100 per run: run it again if more are reported) and checks again.
 */
export async function verifyScreenStats (prisma: Prisma, options: { fix?: boolean } = {}): Promise<VerifyStatsResult> {
  const found = await findDrift(prisma)
  if (options.fix !== true || found.drift.jobIds.length === 0) return { ...found, repaired: [] }
  for (const jobId of found.drift.jobIds) await repairJob(prisma, jobId)
  const after = await findDrift(prisma)
  return { ...after, repaired: found.drift.jobIds }
}
