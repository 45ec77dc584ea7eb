import { Type } from '@sinclair/typebox'
import { OrNull } from '../../db/row-schemas.js'
import type { SqlReader } from '../../db/sql-reader.js'
import { empty, sql, type Sql } from '../../db/sql.js'
import { averageOf } from '../job/job-rows.js'
import { BINS_TEXT } from '../analytics/bins-text.js'
import { COMPARISON, ComparisonColumns, comparisonOf } from '../analytics/comparison-sql.js'
import { RULES_FOUND, VERSION_OF, VERSIONED_SUMMARY_ROWS, ZoneRulesMissing, type AnalyticsOptions, type AnalyticsText, type ZoneRulesRef } from '../analytics/read.js'

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
  ...ComparisonColumns,
})
const VersionRow = Type.Object({ version: Type.String(), rules_found: Type.Boolean() })

/** The selected jobs (`j.id`), the caller's only. */
const SELECTED = ({ organizationId, statuses, userId }: JobSelection): Sql => sql`
    SELECT j.id FROM jobs j
    WHERE j.organization_id = ${organizationId}::uuid
      AND (${statuses?.join(',') ?? null}::text IS NULL OR j.status::text = ANY (string_to_array(${statuses?.join(',') ?? null}::text, ',')))
      AND (${userId ?? null}::uuid IS NULL OR j.user_id = ${userId ?? null}::uuid)`

/** The selection is all the organization's jobs: no filter. */
const wholeOrganization = ({ statuses, userId }: JobSelection): boolean => statuses === undefined && userId === undefined

/**
 * The selection's version: which jobs it holds (their count and the XOR of a hash of each id:
 * no sort), and the version of their figures (one sum, maximum and XOR over summary rows and
 * unfolded deltas, as one job's: jobs/analytics/read.ts). For all the organization's jobs,
 * one row: organization_screen_stats, which the fold adds each job's folded changes to in the
 * same commit, and the organization's unfolded deltas. For a filtered selection, job by job,
 * so that an unselected job's writes keep its 304: a hash join would read every
 * organization's summaries (docs/decisions.md, "Dashboards: answers kept").
 */
const SELECTION_VERSION = (selected: Sql, selection: JobSelection): Sql => sql`(SELECT count(*) || ':' || coalesce(bit_xor(uuid_hash_extended(j.id, 0)), 0) FROM ${selected} j)
      || '/' || ${wholeOrganization(selection)
        ? sql`(SELECT ${VERSION_OF(sql`c`)} FROM (
        SELECT changes, version, changes_hash AS hash FROM organization_screen_stats WHERE organization_id = ${selection.organizationId}::uuid
        UNION ALL
        SELECT 1, d.changed_at, hashint8extended(d.id, 0) FROM screen_summary_deltas d JOIN jobs dj ON dj.id = d.job_id
        WHERE dj.organization_id = ${selection.organizationId}::uuid) c)`
        : sql`(SELECT ${VERSION_OF(sql`c`)} FROM ${selected} j CROSS JOIN LATERAL (${VERSIONED_SUMMARY_ROWS()}) c)`}`

/**
 * The rollup of the selected jobs, as one job's figures: the counts and the overall mean from
 * each job's summaries and unfolded deltas, the completions by local week (only `weeks`' when
 * given) from the summaries of each job above `screensReadMax` completions
 * (job_completion_weeks_in_zone, which the single job's bins read: its exact sums per week) and
 * from the screens of each smaller one (as SMALL_JOB_BINS), summed over the jobs per week and
 * divided once (averageOf): exact, never an average of the jobs' averages. Throws
 * ZoneRulesMissing when the database lacks the zone's rules.
 */
export async function organizationAnalyticsText (reader: SqlReader, selection: JobSelection, options: AnalyticsOptions): Promise<RollupText> {
  const { rules, compare } = options
  const weeks = compare?.weeks ?? options.weeks
  const splitAt = compare?.splitAt
  const screensReadMax = options.screensReadMax ?? 0
  const [row] = await reader.rows(RollupRow, sql`
    WITH rules AS MATERIALIZED (SELECT * FROM zone_rules_of(${rules.set}, ${rules.zone})),
    found AS MATERIALIZED (SELECT ${RULES_FOUND(rules)} AS rules_found),
    jobs_figures AS MATERIALIZED (
      SELECT j.id, st.completed, st.in_progress, st.expired, st.scored, st.score_sum
      FROM (${SELECTED(selection)}) j
      CROSS JOIN LATERAL (
        SELECT coalesce(sum(completed), 0) AS completed, coalesce(sum(in_progress), 0) AS in_progress, coalesce(sum(expired), 0) AS expired,
               coalesce(sum(scored), 0) AS scored, coalesce(sum(score_sum), 0) AS score_sum
        FROM (${VERSIONED_SUMMARY_ROWS(sql`completed, in_progress, expired, scored, score_sum, `)}) c
      ) st
    ),
    parts AS (
      SELECT w.week, w.completed, w.scored, w.score_sum
      FROM found, jobs_figures j
      CROSS JOIN LATERAL job_completion_weeks_in_zone(j.id, ${rules.set}, ${rules.zone}, ${weeks?.first ?? null}::timestamp, ${weeks?.last ?? null}::timestamp) w
      WHERE found.rules_found AND j.completed > ${screensReadMax}::int
      UNION ALL
      SELECT date_trunc('week', zone_local_time(s.completed_at, rules.transitions, rules.offsets)), 1, (s.score IS NOT NULL)::int, s.score::text::numeric
      FROM rules, jobs_figures j JOIN screens s ON s.job_id = j.id AND s.status = 'completed'
      WHERE j.completed <= ${screensReadMax}::int
    ),
    week_sums AS (
      SELECT p.week, sum(p.completed)::int AS completed, sum(p.scored)::int AS scored, coalesce(sum(p.score_sum), 0) AS score_sum
      FROM parts p
      ${weeks !== undefined ? sql`WHERE p.week BETWEEN ${weeks.first}::timestamp AND ${weeks.last}::timestamp` : empty}
      GROUP BY p.week
    )
    SELECT found.rules_found, (SELECT count(*) FROM jobs_figures)::int AS job_count,
           t.completed::int AS completed, t.in_progress::int AS in_progress, t.expired::int AS expired,
           ${averageOf(sql`t.score_sum`, sql`t.scored`)}::text AS average,
           ${SELECTION_VERSION(sql`jobs_figures`, selection)} AS version,
           ${splitAt === undefined ? sql`${BINS_TEXT(sql`week_sums w`)} AS bins` : sql`comparison.*`}
    FROM found, (SELECT coalesce(sum(completed), 0) AS completed, coalesce(sum(in_progress), 0) AS in_progress, coalesce(sum(expired), 0) AS expired,
                        coalesce(sum(scored), 0) AS scored, coalesce(sum(score_sum), 0) AS score_sum FROM jobs_figures) t
         ${splitAt === undefined ? empty : sql`CROSS JOIN LATERAL (${COMPARISON(splitAt)}) comparison`}`)
  if (!row!.rules_found) throw new ZoneRulesMissing(rules)
  const { job_count: jobCount, completed, in_progress: inProgress, expired, average, bins, version } = row!
  return { jobCount, averageScore: average, byStatus: { completed, in_progress: inProgress, expired }, bins, version, ...(compare !== undefined ? { comparison: comparisonOf(row!) } : {}) }
}

/**
 * The selection's version alone (SELECTION_VERSION): what a 304 of the rollup, or a kept answer,
 * costs, no screen read. With `rules`, also whether the database has them (as analyticsVersion).
 */
export async function organizationAnalyticsVersion (reader: SqlReader, selection: JobSelection, rules?: ZoneRulesRef): Promise<{ version: string, rulesFound: boolean }> {
  // The selection read once: inline where the version reads it once (all the jobs), kept where twice.
  const once = wholeOrganization(selection)
  const [row] = await reader.rows(VersionRow, sql`
    ${once ? empty : sql`WITH selected AS MATERIALIZED (${SELECTED(selection)})`}
    SELECT ${SELECTION_VERSION(once ? sql`(${SELECTED(selection)})` : sql`selected`, selection)} AS version, ${rules === undefined ? sql`true` : RULES_FOUND(rules)} AS rules_found`)
  return { version: row!.version, rulesFound: row!.rules_found }
}
