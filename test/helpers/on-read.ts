import type { Prisma } from '../../src/db/database.js'
import type { AnalyticsRows } from '../../src/jobs/repository.js'

// The answers computed from the screens on every read, as the service did before the
// summaries (issue 13) and as the benchmark's baseline still does: the reference the
// summaries must equal. Averages are exact on both sides (numeric sums of each double's
// shortest exact decimal, `score::text`, trimmed, divided by the count), so the comparison is
// exact too.

const average = (sum: string, count: string): string => `(trim_scale(${sum}) / nullif(${count}, 0))::float8`

/** A job's screen count and the average score of its completed screens. */
export async function onReadJobStats (prisma: Prisma, jobId: string): Promise<{ interviewCount: number, averageScore: number | null }> {
  const [row] = await prisma.$queryRawUnsafe<Array<{ interview_count: number, average_score: number | null }>>(`
    SELECT count(*)::int AS interview_count,
           ${average("sum(score::text::numeric) FILTER (WHERE status = 'completed')", "count(score) FILTER (WHERE status = 'completed')")} AS average_score
    FROM screens WHERE job_id = $1::uuid`, jobId)
  return { interviewCount: row!.interview_count, averageScore: row!.average_score }
}

/** A job's screens by status and its weekly bins in `tz`, only those of `weeks` if given. */
export async function onReadAnalytics (prisma: Prisma, jobId: string, tz: string, weeks?: { first: string, last: string }): Promise<AnalyticsRows> {
  const [counts] = await prisma.$queryRawUnsafe<Array<Record<'completed' | 'in_progress' | 'expired', number>>>(`
    SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed, count(*) FILTER (WHERE status = 'in_progress')::int AS in_progress,
           count(*) FILTER (WHERE status = 'expired')::int AS expired
    FROM screens WHERE job_id = $1::uuid`, jobId)
  const bins = await prisma.$queryRawUnsafe<Array<{ week: string, count: number, average: number | null }>>(`
    SELECT to_char(g.week, 'YYYY-MM-DD') AS week, g.count, g.average
    FROM (SELECT date_trunc('week', completed_at AT TIME ZONE $2) AS week, count(*)::int AS count,
                 ${average('sum(score::text::numeric)', 'count(score)')} AS average
          FROM screens WHERE job_id = $1::uuid AND status = 'completed' GROUP BY 1) g
    WHERE $3::timestamp IS NULL OR g.week BETWEEN $3::timestamp AND $4::timestamp
    ORDER BY g.week`, jobId, tz, weeks?.first ?? null, weeks?.last ?? null)
  return { byStatus: counts!, weeks: bins.map(b => ({ week: b.week, count: b.count, averageScore: b.average })) }
}
