import { Type } from '@sinclair/typebox'
import { OrNull } from '../../db/row-schemas.js'
import type { SqlReader } from '../../db/rows.js'
import { Prisma as PrismaSql } from '../../generated/prisma/client.js'
import { averageOf } from '../job/rows.js'
import { RULES_FOUND, VERSION_OF, VERSIONED_SUMMARY_ROWS, ZoneRulesMissing, type AnalyticsOptions, type AnalyticsText } from '../analytics/read.js'

// The organization's rollup: its selected jobs' screens read as one job's, in one statement
// (so one snapshot), and the version of their figures alone (a 304's read).

/** Which of the organization's jobs a rollup covers. */
export interface JobSelection { organizationId: string, statuses?: string[], userId?: string }

/** The rollup's figures: the single job's, with the jobs counted and the overall average as PostgreSQL wrote it. */
export interface RollupText extends AnalyticsText { jobCount: number, averageScore: string | null }

const RollupRow = Type.Object({
  rules_found: Type.Boolean(),
  job_count: Type.Integer(),
  completed: Type.Integer(),
  in_progress: Type.Integer(),
  expired: Type.Integer(),
  average: OrNull(Type.String()),
  bins: OrNull(Type.String()),
  version: Type.String(),
})
const VersionRow = Type.Object({ version: Type.String() })

/** The selected jobs (`j.id`), the caller's only. */
const SELECTED = ({ organizationId, statuses, userId }: JobSelection): PrismaSql.Sql => PrismaSql.sql`
    SELECT j.id FROM jobs j
    WHERE j.organization_id = ${organizationId}::uuid
      AND (${statuses?.join(',') ?? null}::text IS NULL OR j.status::text = ANY (string_to_array(${statuses?.join(',') ?? null}::text, ',')))
      AND (${userId ?? null}::uuid IS NULL OR j.user_id = ${userId ?? null}::uuid)`

/**
 * The selection's version: which jobs it holds, and the versions of their figures (one sum,
 * maximum and XOR over all their summary rows and unfolded deltas, as one job's: jobs/analytics/read.ts).
 */
const SELECTION_VERSION = PrismaSql.sql`(SELECT count(*) || ':' || coalesce(md5(string_agg(j.id::text, ',' ORDER BY j.id)), '') FROM selected j)
      || '/' || (SELECT ${VERSION_OF(PrismaSql.sql`c`)} FROM selected j CROSS JOIN LATERAL (${VERSIONED_SUMMARY_ROWS()}) c)`

/**
 * The rollup of the selected jobs: every screen of theirs counted by status, the mean of the
 * scored completions, and the completions binned by local week (only `weeks`' when given), all
 * from the screens (an index-only scan of `(job_id, status, completed_at, score)`): exact, the
 * averages dividing exact numeric sums as a single job's do (averageOf). Throws
 * ZoneRulesMissing when the database lacks the zone's rules.
 */
export async function organizationAnalyticsText (reader: SqlReader, selection: JobSelection, options: Pick<AnalyticsOptions, 'rules' | 'weeks'>): Promise<RollupText> {
  const { rules, weeks } = options
  const [row] = await reader.rows(RollupRow, PrismaSql.sql`
    WITH rules AS MATERIALIZED (SELECT * FROM zone_rules_of(${rules.set}, ${rules.zone})),
    selected AS MATERIALIZED (${SELECTED(selection)}),
    counts AS (
      SELECT count(*) FILTER (WHERE s.status = 'completed')::int AS completed, count(*) FILTER (WHERE s.status = 'in_progress')::int AS in_progress,
             count(*) FILTER (WHERE s.status = 'expired')::int AS expired,
             count(s.score) FILTER (WHERE s.status = 'completed') AS scored,
             coalesce(sum(s.score::text::numeric) FILTER (WHERE s.status = 'completed'), 0) AS score_sum
      FROM selected j JOIN screens s ON s.job_id = j.id
    ),
    weeks AS (
      SELECT date_trunc('week', zone_local_time(s.completed_at, rules.transitions, rules.offsets)) AS week, count(*)::int AS completed,
             count(s.score)::int AS scored, coalesce(sum(s.score::text::numeric), 0) AS score_sum
      FROM rules, selected j JOIN screens s ON s.job_id = j.id AND s.status = 'completed'
      GROUP BY 1
    )
    SELECT found.rules_found, (SELECT count(*) FROM selected)::int AS job_count, counts.completed, counts.in_progress, counts.expired,
           ${averageOf(PrismaSql.sql`counts.score_sum`, PrismaSql.sql`counts.scored`)}::text AS average,
           (SELECT '[' || string_agg('["' || to_char(w.week, 'YYYY-MM-DD') || '",' || w.completed || ','
                                    || coalesce(${averageOf(PrismaSql.sql`w.score_sum`, PrismaSql.sql`w.scored`)}::text, 'null') || ']', ',' ORDER BY w.week) || ']'
            FROM weeks w
            ${weeks !== undefined ? PrismaSql.sql`WHERE w.week BETWEEN ${weeks.first}::timestamp AND ${weeks.last}::timestamp` : PrismaSql.empty}) AS bins,
           ${SELECTION_VERSION} AS version
    FROM (SELECT ${RULES_FOUND(rules)} AS rules_found) found, counts`)
  if (!row!.rules_found) throw new ZoneRulesMissing(rules)
  const { job_count: jobCount, completed, in_progress: inProgress, expired, average, bins, version } = row!
  return { jobCount, averageScore: average, byStatus: { completed, in_progress: inProgress, expired }, bins, version }
}

/** The selection's version alone (SELECTION_VERSION): what a 304 of the rollup costs, no screen read. */
export async function organizationAnalyticsVersion (reader: SqlReader, selection: JobSelection): Promise<string> {
  const [row] = await reader.rows(VersionRow, PrismaSql.sql`
    WITH selected AS MATERIALIZED (${SELECTED(selection)})
    SELECT ${SELECTION_VERSION} AS version`)
  return row!.version
}
