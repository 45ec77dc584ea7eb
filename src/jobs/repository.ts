import type { Prisma } from '../db/database.js'
import type { JobStatus, ScreenStatus } from '../generated/prisma/enums.js'
import { Prisma as PrismaSql } from '../generated/prisma/client.js'

const DAY_MS = 86_400_000

// Queries only. Every method takes the caller's organization and scopes inside the query
// itself; a null result is the caller's 404.

const jobColumns = {
  id: true,
  userId: true,
  title: true,
  companyName: true,
  description: true,
  status: true,
  slug: true,
  shareToken: true,
  logoUrl: true,
  brandColor: true,
  showServiceBranding: true,
  euCandidatesAllowed: true,
  createdAt: true,
  updatedAt: true,
} as const

export type JobRow = PrismaSql.JobGetPayload<{ select: typeof jobColumns }>

/** Screens of a job by status: how many, and the mean of those that have a score. */
export interface StatusStats {
  status: ScreenStatus
  count: number
  averageScore: number | null
}

export interface JobWithStats {
  job: JobRow
  questionCount: number
  screens: StatusStats[]
}

function statusStats (rows: Array<{ jobId?: string, status: ScreenStatus, _count: { _all: number }, _avg: { score: number | null } }>): StatusStats[] {
  return rows.map(r => ({ status: r.status, count: r._count._all, averageScore: r._avg.score }))
}

/**
 * Screens of one job grouped by status. One index-only scan of the (job_id, status, ...)
 * index; the organization scope is a join to the job in the same query.
 */
export async function screenStatsOfJob (prisma: Prisma, organizationId: string, jobId: string): Promise<StatusStats[]> {
  const rows = await prisma.screen.groupBy({
    by: ['status'],
    where: { jobId, job: { organizationId } },
    _count: { _all: true },
    _avg: { score: true },
  })
  return statusStats(rows)
}

/** A job with its counts: two queries, run concurrently. Null when not the caller's. */
export async function findJob (prisma: Prisma, organizationId: string, jobId: string): Promise<JobWithStats | null> {
  const [job, screens] = await Promise.all([
    prisma.job.findFirst({
      where: { id: jobId, organizationId },
      select: { ...jobColumns, _count: { select: { questions: true } } },
    }),
    screenStatsOfJob(prisma, organizationId, jobId),
  ])
  if (job === null) return null
  const { _count, ...row } = job
  return { job: row, questionCount: _count.questions, screens }
}

export interface JobPosition { createdAt: Date, id: string }

/**
 * One page of the organization's jobs, newest first (ties broken by id), after `after`.
 * Three queries: the page, then its questions and screens counts concurrently, each bounded
 * by the page's ids, never by the size of the organization.
 */
export async function listJobs (prisma: Prisma, organizationId: string, options: { limit: number, status?: JobStatus, after?: JobPosition }): Promise<{ jobs: JobWithStats[], hasMore: boolean }> {
  const { after } = options
  const rows = await prisma.job.findMany({
    where: {
      organizationId,
      ...(options.status !== undefined ? { status: options.status } : {}),
      ...(after !== undefined ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: options.limit + 1,
    select: jobColumns,
  })
  const page = rows.slice(0, options.limit)
  const ids = page.map(j => j.id)
  const [questions, screens] = ids.length === 0
    ? [[], []]
    : await Promise.all([
      // The ids come from the scoped query above; a join back to jobs would read every job
      // of the organization, a cost that grows with it.
      prisma.question.groupBy({ by: ['jobId'], where: { jobId: { in: ids } }, _count: { _all: true } }),
      prisma.screen.groupBy({ by: ['jobId', 'status'], where: { jobId: { in: ids } }, _count: { _all: true }, _avg: { score: true } }),
    ])
  const questionCounts = new Map(questions.map(q => [q.jobId, q._count._all]))
  return {
    jobs: page.map(job => ({
      job,
      questionCount: questionCounts.get(job.id) ?? 0,
      screens: statusStats(screens.filter(s => s.jobId === job.id)),
    })),
    hasMore: rows.length > options.limit,
  }
}

/**
 * Whether PostgreSQL refused a time zone name (SQLSTATE 22023): the runtime's list and the
 * database's can differ (old aliases, newer tzdata), and the database has the last word.
 */
export function isUnknownTimeZone (error: unknown): boolean {
  const cause = (error as { meta?: { driverAdapterError?: { cause?: { code?: string, message?: string } } } })?.meta?.driverAdapterError?.cause
  return cause?.code === '22023' && /time zone/i.test(cause.message ?? '')
}

export interface WeeklyBinRow {
  week: string
  count: number
  averageScore: number | null
}

/**
 * Completed screens of a job binned by the Monday of their completion week, local to `tz`
 * (PostgreSQL's time-zone database handles daylight saving), ascending. Null when the job
 * is not the caller's: the bins hang off the scoped job row by a lateral join, so one
 * round trip answers both "does it exist" and "what are its bins".
 *
 * Prisma's groupBy cannot group by an expression (date_trunc), hence one parameterized
 * raw query. With a range, the sargable instant bounds (widened by two days, more than any
 * UTC offset) let the index do the work; the exact cut is on the local week.
 */
export async function weeklyBins (prisma: Prisma, organizationId: string, jobId: string, options: { tz: string, weeks?: { first: string, last: string } }): Promise<WeeklyBinRow[] | null> {
  const { tz, weeks } = options
  const bounds = weeks === undefined
    ? PrismaSql.empty
    : PrismaSql.sql`AND s.completed_at >= ${new Date(Date.parse(weeks.first) - 2 * DAY_MS)} AND s.completed_at < ${new Date(Date.parse(weeks.last) + 9 * DAY_MS)}`
  const exact = weeks === undefined
    ? PrismaSql.empty
    : PrismaSql.sql`WHERE w.week BETWEEN ${weeks.first}::timestamp AND ${weeks.last}::timestamp`
  const rows = await prisma.$queryRaw<Array<{ week: string | null, count: number | null, average_score: number | null }>>`
    SELECT b.week, b.count, b.average_score
    -- The zone is evaluated once whatever the data, so an unknown one is always refused.
    FROM (SELECT now() AT TIME ZONE ${tz} AS local_now) zone_check
    CROSS JOIN jobs j
    LEFT JOIN LATERAL (
      SELECT to_char(w.week, 'YYYY-MM-DD') AS week, count(*)::int AS count, avg(w.score) AS average_score
      FROM (
        SELECT date_trunc('week', s.completed_at AT TIME ZONE ${tz}) AS week, s.score
        FROM screens s
        WHERE s.job_id = j.id AND s.status = 'completed' ${bounds}
      ) w
      ${exact}
      GROUP BY w.week
    ) b ON true
    WHERE zone_check.local_now IS NOT NULL AND j.id = ${jobId}::uuid AND j.organization_id = ${organizationId}::uuid
    ORDER BY b.week`
  if (rows.length === 0) return null
  return rows.filter(r => r.week !== null).map(r => ({ week: r.week as string, count: Number(r.count), averageScore: r.average_score === null ? null : Number(r.average_score) }))
}
