import { Type, type Static } from '@sinclair/typebox'
import { ReadElsewhere } from '../../db/errors.js'
import { OrNull } from '../../db/row-schemas.js'
import type { SqlReader } from '../../db/sql-reader.js'
import { empty, sql, type Sql } from '../../db/sql.js'
import type { ScreenStatus } from '../../generated/prisma/enums.js'
import type { ComparisonText, ComparisonWindow } from './comparison-text.js'
import { BINS_TEXT } from './bins-text.js'
import { ComparisonColumns, comparisonOf, JOB_COMPARISON } from './comparison-sql.js'

// Analytics' reads: the figures of a job with its weekly bins in a zone, in one statement,
// and the version of its figures alone (a 304's read). docs/summaries-design.md.

export interface WeeklyBinRow {
  week: string
  count: number
  averageScore: number | null
}

export interface AnalyticsRows {
  byStatus: Record<ScreenStatus, number>
  weeks: WeeklyBinRow[]
}

/** The figures with the version of the job's summaries they were read at (analyticsVersion). */
export type VersionedAnalyticsRows = AnalyticsRows & { version: string }

/**
 * The figures as the statement returns them: the bins as the JSON text of an array of
 * [week, count, average] ascending by week, or null when no week has a completion (the
 * route copies it into its answer: body.ts).
 */
/** A job's (or a rollup's) figures as the statement wrote them; `comparison` with compare=previous_period. */
export interface AnalyticsText { byStatus: Record<ScreenStatus, number>, bins: string | null, version: string, comparison?: ComparisonText }

/** The week range of an analytics request: Mondays, as `YYYY-MM-DD`. */
export interface WeekRange { first: string, last: string }

/**
 * The version of a job's figures: how many changes they have had, the latest change's time,
 * and the XOR of a hash of each change's id. Writers append deltas; a fold moves them into
 * slot 0, which counts them, keeps the latest of their times and XORs their hashes, in one
 * commit: the version is the same before and after a fold, as the figures are. A reader sees
 * every delta committed before its snapshot (folded or not); the hash tells apart two such
 * sets of the same size (a hot standby may make two near-simultaneous commits visible in
 * another order than the primary did). The time (never below the clock of the change, µs)
 * keeps a version given out before the database was restored from an older backup from
 * coming back with other figures. Rebuilds and TRUNCATE count as changes.
 */
export const VERSIONED_SUMMARY_ROWS = (columns: Sql = empty, jobs: Sql = sql`= j.id`): Sql => sql`
  SELECT ${columns}changes, version, changes_hash AS hash FROM job_screen_stats WHERE job_id ${jobs}
  UNION ALL
  SELECT ${columns}1, changed_at, hashint8extended(id, 0) FROM screen_summary_deltas WHERE job_id ${jobs}`
export const VERSION_OF = (rows: Sql): Sql =>
  sql`coalesce(sum(${rows}.changes), 0) || ':' || coalesce(max(${rows}.version), 0) || ':' || coalesce(bit_xor(${rows}.hash), 0)`
const SUMMARY_VERSION = sql`(SELECT ${VERSION_OF(sql`c`)} FROM (${VERSIONED_SUMMARY_ROWS()}) c)`

/**
 * A small job's weekly bins, from its screens (an index-only range scan of `(job_id, status,
 * completed_at, score)`, as the on-read baseline reads them), as the JSON text of an array of
 * [week, count, average] ascending by week, or null when no week has a completion: the same
 * values as `job_weekly_bins_in_zone` returns for such a job, the average the same expression
 * (averageOf). Built as text rather than with json_agg(json_build_array(…)): PostgreSQL
 * looks up each value's type and output function for every json_build_array, which cost a
 * 200-screen job's request more than all of its text concatenation (counted with callgrind:
 * docs/performance.md, "Small analytics: the bins in the statement"). Each part is valid JSON
 * as it is: a `YYYY-MM-DD` week, an int4, and a finite double as float8out writes it (as
 * json_build_array writes it too), or null. With `weeks`, only the bins of those weeks; the
 * condition is in the text only then, where it costs an evaluation per screen.
 */
export const SMALL_JOB_BINS = (weeks: WeekRange | undefined): Sql => BINS_TEXT(sql`(
        SELECT date_trunc('week', zone_local_time(s.completed_at, rules.transitions, rules.offsets)) AS week, count(*)::int AS completed,
               count(s.score)::int AS scored, coalesce(sum(s.score::text::numeric), 0) AS score_sum
        FROM rules, screens s
        WHERE s.job_id = j.id AND s.status = 'completed'
        GROUP BY 1
      ) w`, weeks !== undefined ? sql`w.week BETWEEN ${weeks.first}::timestamp AND ${weeks.last}::timestamp` : undefined)

/**
 * A job's (`j`, its counts `st`, the rules `found`) bins column: from its summaries above
 * `screensReadMax` completions (job_weekly_bins_in_zone), else from its screens
 * (SMALL_JOB_BINS); with compare, the comparison's columns, its bins among them, read once
 * for both periods (JOB_COMPARISON, joined as `comparison`). Not read where `known` holds (the
 * caller keeps the answer of the version the statement reads: the batch's kept answers).
 */
export const JOB_BINS = (rules: ZoneRulesRef, weeks: WeekRange | undefined, screensReadMax: number, compare: ComparisonWindow | undefined, known?: Sql): Sql => compare !== undefined
  ? sql`comparison.*`
  : sql`CASE WHEN j.id IS NULL OR NOT found.rules_found${known === undefined ? empty : sql` OR ${known}`} THEN NULL
                WHEN st.completed > ${screensReadMax}::int
                  THEN job_weekly_bins_in_zone(j.id, ${rules.set}, ${rules.zone}, ${weeks?.first ?? null}::timestamp, ${weeks?.last ?? null}::timestamp)
                ELSE ${SMALL_JOB_BINS(weeks)} END AS bins`

/** The zone rules a statement computes local weeks with: a set loaded in the database (src/zones/store.ts) and one of its zones. */
export interface ZoneRulesRef { set: string, zone: string }

/** The rules a statement was to read are not in its database: a replica that has not replayed their load yet. */
export class ZoneRulesMissing extends ReadElsewhere {
  constructor (readonly rules: ZoneRulesRef) { super(`zone rules ${rules.set} of ${rules.zone} are not in this database`) }
}

/** A found job's figures from its row; its comparison when the statement was asked one. */
export const analyticsTextOf = (row: Static<typeof AnalyticsRow>, compared: boolean): AnalyticsText => ({
  byStatus: { completed: row.completed, in_progress: row.in_progress, expired: row.expired },
  bins: row.bins,
  version: row.version,
  ...(compared ? { comparison: comparisonOf(row) } : {}),
})

/** The analytics statement's one row. */
export const AnalyticsRow = Type.Object({
  rules_found: Type.Boolean(),
  job_id: OrNull(Type.String()),
  completed: Type.Integer(),
  in_progress: Type.Integer(),
  expired: Type.Integer(),
  version: Type.String(),
  /** The weekly bins as JSON text (SMALL_JOB_BINS, job_weekly_bins_in_zone). */
  bins: OrNull(Type.String()),
  ...ComparisonColumns,
})

const VersionRow = Type.Object({ version: Type.String(), rules_found: Type.Boolean() })

/** Whether the database has the rules of `rules.zone` in the set `rules.set` (zone_rules). */
export const RULES_FOUND = (rules: ZoneRulesRef): Sql => sql`EXISTS (SELECT FROM zone_rules WHERE rule_set = ${rules.set} AND zone = ${rules.zone})`

/**
 * A job's screens by status and its completed screens binned by the Monday of their
 * completion week, local to `rules`' zone (the service's zone rules, handed to the database
 * as data: src/zones/), ascending; with `weeks`, only the bins of those weeks. Null when the
 * job is not the caller's. One statement: the status counts and the version in one read of
 * the job's summaries and unfolded deltas; the bins of a small job from its screens, in the
 * statement (SMALL_JOB_BINS), and those of a larger one from `job_weekly_bins_in_zone`, which
 * reads `job_completion_weeks_in_zone` (two rows a week: a segment inside the week and a
 * boundary window split at the zone's Monday 00:00, per slot written, plus the unfolded
 * deltas, whatever the number of screens; migrations 20261123200000_summary_deltas and
 * 20261126120000_zone_rules).
 *
 * Prisma's groupBy cannot group by an expression (a local week), hence raw SQL. Throws
 * ZoneRulesMissing when the database lacks the rules (the read is then run elsewhere).
 */
export async function jobAnalyticsText (reader: SqlReader, organizationId: string, jobId: string, options: AnalyticsOptions): Promise<AnalyticsText | null> {
  const { rules, weeks, compare } = options
  // Up to `screensReadMax` completed screens (none by default), the weekly bins are computed
  // from the screens (an index-only range scan, as the on-read baseline does) rather than
  // from the summaries, which cost about two rows per week of history whatever the job's
  // size: more than a small job's screens. The answer is the same either way, exact, in the
  // statement's one snapshot. The small job's branch is a subquery of the statement, the
  // large job's a call of `job_weekly_bins_in_zone` (plpgsql), which holds the summaries'
  // plan: a function call costs nothing until it is evaluated, where a branch of plan nodes
  // costs its executor start-up on every execution, taken or not (docs/summaries-design.md,
  // "Small jobs read their screens"). The zone's rules are read once (the `rules` CTE, or the
  // function's own), only by the branch taken.
  // One row, the bins as the text of one JSON array of [week, count, average]: each row of a
  // raw result costs more than its bytes, and the text goes into the answer as it is.
  const screensReadMax = options.screensReadMax ?? 0
  const rows = await reader.rows(AnalyticsRow, sql`
    WITH rules AS MATERIALIZED (SELECT * FROM zone_rules_of(${rules.set}, ${rules.zone}))
    SELECT found.rules_found, j.id AS job_id, st.completed, st.in_progress, st.expired, st.version,
           ${JOB_BINS(rules, weeks, screensReadMax, compare)}
    FROM (SELECT ${RULES_FOUND(rules)} AS rules_found) found
    LEFT JOIN jobs j ON j.id = ${jobId}::uuid AND j.organization_id = ${organizationId}::uuid
    LEFT JOIN LATERAL (
      SELECT coalesce(sum(completed), 0)::int AS completed, coalesce(sum(in_progress), 0)::int AS in_progress,
             coalesce(sum(expired), 0)::int AS expired, ${VERSION_OF(sql`c`)} AS version
      FROM (${VERSIONED_SUMMARY_ROWS(sql`completed, in_progress, expired, `)}) c
    ) st ON true
    ${compare === undefined ? empty : JOB_COMPARISON(rules, compare, screensReadMax)}`)
  const row = rows[0]!
  if (!row.rules_found) throw new ZoneRulesMissing(rules)
  if (row.job_id === null) return null
  return analyticsTextOf(row, compare !== undefined)
}

/** `compare`: the weeks of the range and the previous period, split at the range's first Monday (period-comparison.ts). */
export interface AnalyticsOptions { rules: ZoneRulesRef, weeks?: WeekRange, screensReadMax?: number, compare?: ComparisonWindow }

/** jobAnalyticsText with its bins parsed: for tools and tests, which compare them with other computations. */
export async function jobAnalytics (reader: SqlReader, organizationId: string, jobId: string, options: AnalyticsOptions): Promise<VersionedAnalyticsRows | null> {
  const found = await jobAnalyticsText(reader, organizationId, jobId, options)
  if (found === null) return null
  const { byStatus, bins, version } = found
  return { byStatus, weeks: bins === null ? [] : (JSON.parse(bins) as Array<[string, number, number | null]>).map(([week, count, averageScore]) => ({ week, count, averageScore })), version }
}

/**
 * The job's summary version (see SUMMARY_VERSION) alone: what a 304 of analytics costs, one
 * index read of at most 8 rows. Null when the job is not the caller's. With `rules`, also
 * whether the database has them, as jobAnalytics checks: a kept answer is given only where a
 * computed one would be, so that rules gone from the database are noticed (and stored again).
 */
export async function analyticsVersion (reader: SqlReader, organizationId: string, jobId: string, rules?: ZoneRulesRef): Promise<{ version: string, rulesFound: boolean } | null> {
  const rows = await reader.rows(VersionRow, sql`
    SELECT ${SUMMARY_VERSION} AS version, ${rules === undefined ? sql`true` : RULES_FOUND(rules)} AS rules_found
    FROM jobs j WHERE j.id = ${jobId}::uuid AND j.organization_id = ${organizationId}::uuid`)
  const row = rows[0]
  return row === undefined ? null : { version: row.version, rulesFound: row.rules_found }
}
