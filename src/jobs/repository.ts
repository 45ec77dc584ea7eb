import type { Prisma } from '../db/database.js'
import type { JobStatus, ScreenStatus } from '../generated/prisma/enums.js'

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

export interface JobRow {
  id: string
  userId: string
  title: string
  companyName: string
  description: string
  status: JobStatus
  slug: string
  shareToken: string
  logoUrl: string | null
  brandColor: string | null
  showServiceBranding: boolean
  euCandidatesAllowed: boolean
  createdAt: Date
  updatedAt: Date
}

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
      prisma.question.groupBy({ by: ['jobId'], where: { jobId: { in: ids }, job: { organizationId } }, _count: { _all: true } }),
      prisma.screen.groupBy({ by: ['jobId', 'status'], where: { jobId: { in: ids }, job: { organizationId } }, _count: { _all: true }, _avg: { score: true } }),
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
