import type { Prisma } from '../../src/db/database.js'
import type { AnalyticsRows } from '../../src/jobs/analytics/read.js'
import { zoneReference, type ZoneReference } from './zone-reference.js'

// The answers computed from the screens on every read, as the service did before the
// summaries (issue 13) and as the benchmark's baseline still does: the reference the
// summaries must equal. Weeks are placed by an implementation of their own (onReadAnalytics).
// Averages are exact on both sides (numeric sums of each double's shortest exact decimal,
// `score::text`, trimmed, divided by the count), so the comparison is exact too.

const average = (sum: string, count: string): string => `(trim_scale(${sum}) / nullif(${count}, 0))::float8`

/** A job's screen count and the average score of its completed screens. */
export async function onReadJobStats (prisma: Prisma, jobId: string): Promise<{ interviewCount: number, averageScore: number | null }> {
  const [row] = await prisma.$queryRawUnsafe<Array<{ interview_count: number, average_score: number | null }>>(`
    SELECT count(*)::int AS interview_count,
           ${average("sum(score::text::numeric) FILTER (WHERE status = 'completed')", "count(score) FILTER (WHERE status = 'completed')")} AS average_score
    FROM screens WHERE job_id = $1::uuid`, jobId)
  return { interviewCount: row!.interview_count, averageScore: row!.average_score }
}

/**
 * A job's screens by status and its weekly bins in `tz`, only those of `weeks` if given. Each
 * completion's week is computed here, by the js-joda reference over the service's zone data
 * (zone-reference.ts), not by PostgreSQL: neither the database's tzdata nor the service's
 * SQL places a completion. The averages are then taken per week in PostgreSQL, with the
 * expression above.
 */
export async function onReadAnalytics (prisma: Prisma, jobId: string, tz: string, weeks?: { first: string, last: string }, reference: ZoneReference = zoneReference()): Promise<AnalyticsRows> {
  const [counts] = await prisma.$queryRawUnsafe<Array<Record<'completed' | 'in_progress' | 'expired', number>>>(`
    SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed, count(*) FILTER (WHERE status = 'in_progress')::int AS in_progress,
           count(*) FILTER (WHERE status = 'expired')::int AS expired
    FROM screens WHERE job_id = $1::uuid`, jobId)
  const completed = await prisma.$queryRawUnsafe<Array<{ id: string, completed_at: Date }>>(
    "SELECT id, completed_at FROM screens WHERE job_id = $1::uuid AND status = 'completed'", jobId)
  const placed = completed.map(s => ({ id: s.id, week: reference.mondayOf(s.completed_at.getTime(), tz) }))
    .filter(s => weeks === undefined || (s.week >= weeks.first && s.week <= weeks.last))
  const bins = await prisma.$queryRawUnsafe<Array<{ week: string, count: number, average: number | null }>>(`
    SELECT w.week, count(*)::int AS count, ${average('sum(s.score::text::numeric)', 'count(s.score)')} AS average
    FROM unnest($1::uuid[], $2::text[]) AS w(id, week) JOIN screens s ON s.id = w.id
    GROUP BY w.week ORDER BY w.week`, placed.map(s => s.id), placed.map(s => s.week))
  return { byStatus: counts!, weeks: bins.map(b => ({ week: b.week, count: b.count, averageScore: b.average })) }
}
