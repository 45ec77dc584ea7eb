import { Type, type Static } from '@sinclair/typebox'
import { OrNull } from '../../db/row-schemas.js'
import { empty, sql, type Sql } from '../../db/sql.js'
import { averageOf } from '../job/job-rows.js'
import { BINS_TEXT } from './bins-text.js'
import type { ComparisonText, ComparisonWindow } from './comparison-text.js'

// compare=previous_period in the statements (docs/decisions.md, "Dashboards: the previous
// period"): the weeks of both periods summed once (`week_sums`: week, completed, scored,
// score_sum), split at the range's first Monday.

const WEEK_SUMS = sql`week_sums w`

const SIDE = (where: Sql): Sql => sql`(SELECT coalesce(sum(w.completed), 0)::int AS completed, coalesce(sum(w.scored), 0)::int AS scored, coalesce(sum(w.score_sum), 0) AS score_sum FROM ${WEEK_SUMS} WHERE ${where})`

/**
 * The comparison's columns (ComparisonColumns, and the range's `bins`) from `week_sums`: before
 * `splitAt` the previous period's, the others the range's; the change of means exact, one
 * fraction (s₁·n₂ − s₂·n₁) / (n₁·n₂) rounded once.
 */
export const COMPARISON = (splitAt: string): Sql => sql`
    SELECT ${BINS_TEXT(WEEK_SUMS, sql`w.week >= ${splitAt}::timestamp`)} AS bins,
           ${BINS_TEXT(WEEK_SUMS, sql`w.week < ${splitAt}::timestamp`)} AS previous_bins,
           cur.completed AS period_completed, ${averageOf(sql`cur.score_sum`, sql`cur.scored`)}::text AS period_average,
           prev.completed AS previous_completed, ${averageOf(sql`prev.score_sum`, sql`prev.scored`)}::text AS previous_average,
           ((trim_scale(cur.score_sum) * prev.scored - trim_scale(prev.score_sum) * cur.scored) / nullif(cur.scored::numeric * prev.scored, 0))::float8::text AS average_change
    FROM ${SIDE(sql`w.week >= ${splitAt}::timestamp`)} cur, ${SIDE(sql`w.week < ${splitAt}::timestamp`)} prev`

/**
 * One job's (`j`, its counts `st`, the rules `found`) comparison, a lateral subquery: its week
 * sums over both periods from its summaries above `screensReadMax` completions
 * (job_completion_weeks_in_zone, one row a week, which job_weekly_bins_in_zone writes as text),
 * else from its screens (as SMALL_JOB_BINS): the range's bins the same text as without compare.
 * Where `known` holds, nothing is read (the caller keeps the answer).
 */
export const JOB_COMPARISON = (rules: { set: string, zone: string }, window: ComparisonWindow, screensReadMax: number, known?: Sql): Sql => {
  const unknown = known === undefined ? empty : sql` AND NOT ${known}`
  return sql`LEFT JOIN LATERAL (
      WITH week_sums AS (
        SELECT p.week, sum(p.completed)::int AS completed, sum(p.scored)::int AS scored, coalesce(sum(p.score_sum), 0) AS score_sum
        FROM (
          SELECT w.week, w.completed, w.scored, w.score_sum
          FROM job_completion_weeks_in_zone(j.id, ${rules.set}, ${rules.zone}, ${window.weeks.first}::timestamp, ${window.weeks.last}::timestamp) w
          WHERE found.rules_found AND st.completed > ${screensReadMax}::int${unknown}
          UNION ALL
          SELECT date_trunc('week', zone_local_time(s.completed_at, rules.transitions, rules.offsets)), 1, (s.score IS NOT NULL)::int, s.score::text::numeric
          FROM rules, screens s
          WHERE s.job_id = j.id AND s.status = 'completed' AND st.completed <= ${screensReadMax}::int${unknown}
        ) p
        WHERE p.week BETWEEN ${window.weeks.first}::timestamp AND ${window.weeks.last}::timestamp
        GROUP BY p.week
      )
      ${COMPARISON(window.splitAt)}
    ) comparison ON j.id IS NOT NULL`
}

/** The columns COMPARISON adds to a statement's row (absent without compare; null for a job not found). */
export const ComparisonColumns = {
  previous_bins: Type.Optional(OrNull(Type.String())),
  period_completed: Type.Optional(OrNull(Type.Integer())),
  period_average: Type.Optional(OrNull(Type.String())),
  previous_completed: Type.Optional(OrNull(Type.Integer())),
  previous_average: Type.Optional(OrNull(Type.String())),
  average_change: Type.Optional(OrNull(Type.String())),
}
type ComparisonRow = Static<ReturnType<typeof Type.Object<typeof ComparisonColumns>>>

/** The comparison of a row that has its columns (a statement run with compare). */
export const comparisonOf = (row: ComparisonRow): ComparisonText => ({
  period: { completed: row.period_completed ?? 0, averageScore: row.period_average ?? null },
  previous: { completed: row.previous_completed ?? 0, averageScore: row.previous_average ?? null, bins: row.previous_bins ?? null },
  averageChange: row.average_change ?? null,
})
