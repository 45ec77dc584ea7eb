import { Type, type Static } from '@sinclair/typebox'
import { OrNull } from '../../db/row-schemas.js'
import { empty, sql, type Sql } from '../../db/sql.js'
import { JobStatus } from '../../generated/prisma/enums.js'

// A job with its counts as the statements read it: the SQL every read of jobs shares (get job,
// a list page, a sync page), and the rows it gives. Each read is one statement that takes the
// caller's organization and scopes inside the query itself; a null result is the caller's 404.
// The query builder would need three queries (job, question count, screens by status), and a
// request pays a round trip and Prisma's per-query work for each (docs/performance.md, "SQL
// per request"; docs/decisions.md, "Departures from the design card").
//
// Screen figures come from the summaries that triggers keep (job_screen_stats,
// job_completion_segments, job_completion_boundaries; docs/summaries-design.md), never from
// the screens themselves: a job's cost does not grow with its screens. Averages divide exact
// numeric sums, trimmed so that the result does not depend on how the sum was reached:
// `averageOf` below, the same expression as the on-read computation the tests and the
// benchmark compare against.

/** A job's own columns, as jobsWithStats names them. */
export const JobRowSchema = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  title: Type.String(),
  companyName: Type.String(),
  description: Type.String(),
  status: Type.Enum(JobStatus),
  slug: Type.String(),
  shareToken: Type.String(),
  logoUrl: OrNull(Type.String()),
  brandColor: OrNull(Type.String()),
  showServiceBranding: Type.Boolean(),
  euCandidatesAllowed: Type.Boolean(),
  createdAt: Type.Date(),
  updatedAt: Type.Date(),
})
export type JobRow = Static<typeof JobRowSchema>

/** A job's row with its counts (jobsWithStats). */
export const JobWithStatsRowSchema = Type.Composite([JobRowSchema, Type.Object({
  questionCount: Type.Integer(),
  /** Screens in any status. */
  interviewCount: Type.Integer(),
  /** Mean score of the completed screens that have one; null when none has. */
  averageScore: OrNull(Type.Number()),
})])
export type JobWithStatsRow = Static<typeof JobWithStatsRowSchema>

export interface JobWithStats {
  job: JobRow
  questionCount: number
  /** Screens in any status. */
  interviewCount: number
  /** Mean score of the completed screens that have one; null when none has. */
  averageScore: number | null
}

/**
 * The mean of scores summed exactly: `sum` a numeric sum, `count` how many were summed.
 * trim_scale makes the division's precision depend on the sum's value only, not on the
 * scale it carries from additions (numeric keeps the largest scale it has seen).
 */
export const averageOf = (sum: Sql, count: Sql): Sql =>
  sql`(trim_scale(${sum}) / nullif(${count}, 0))::float8`

/**
 * A job's (`j.id`) figures as stored: its summary rows plus the deltas not yet folded into them
 * (migration 20261123200000_summary_deltas). Their sum is exact at every instant; a writer
 * appends deltas and never touches a summary row.
 */
const SUMMARY_ROWS = (columns: Sql): Sql => sql`
  SELECT ${columns} FROM job_screen_stats WHERE job_id = j.id
  UNION ALL
  SELECT ${columns} FROM screen_summary_deltas WHERE job_id = j.id`

/**
 * Jobs with their counts (JobWithStatsRow), from `source` (a table or subquery aliased j),
 * plus `more` (`, column…` of the source): the lateral subqueries run once per job of the
 * source, each an index scan of that job's few rows (questions; at most 8 slots of summary).
 */
export const jobsWithStats = (source: Sql, more: Sql = empty): Sql => sql`
  SELECT j.id, j.user_id AS "userId", j.title, j.company_name AS "companyName", j.description,
         j.status::text AS status, j.slug, j.share_token AS "shareToken", j.logo_url AS "logoUrl",
         j.brand_color AS "brandColor", j.show_service_branding AS "showServiceBranding",
         j.eu_candidates_allowed AS "euCandidatesAllowed", j.created_at AS "createdAt", j.updated_at AS "updatedAt",
         q.count AS "questionCount", s.count AS "interviewCount", s.average AS "averageScore"${more}
  FROM ${source} j
  CROSS JOIN LATERAL (SELECT count(*)::int AS count FROM questions WHERE job_id = j.id) q
  CROSS JOIN LATERAL (
    SELECT coalesce(sum(in_progress + completed + expired), 0)::int AS count, ${averageOf(sql`sum(score_sum)`, sql`sum(scored)`)} AS average
    FROM (${SUMMARY_ROWS(sql`in_progress, completed, expired, scored, score_sum`)}) st
  ) s`

/** A JobWithStatsRow (and any other columns, dropped) as the job and its counts. */
export function withStats ({ questionCount, interviewCount, averageScore, ...columns }: JobWithStatsRow): JobWithStats {
  const { id, userId, title, companyName, description, status, slug, shareToken, logoUrl, brandColor, showServiceBranding, euCandidatesAllowed, createdAt, updatedAt } = columns
  return { job: { id, userId, title, companyName, description, status, slug, shareToken, logoUrl, brandColor, showServiceBranding, euCandidatesAllowed, createdAt, updatedAt }, questionCount, interviewCount, averageScore }
}
