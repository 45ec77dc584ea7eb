import { Type } from '@sinclair/typebox'
import type { SqlReader } from '../../db/sql-reader.js'
import { empty, sql, type Sql } from '../../db/sql.js'
import { JOB_COMPARISON } from '../analytics/comparison-sql.js'
import { AnalyticsRow, analyticsTextOf, JOB_BINS, RULES_FOUND, VERSION_OF, VERSIONED_SUMMARY_ROWS, ZoneRulesMissing, type AnalyticsOptions, type AnalyticsText, type ZoneRulesRef } from '../analytics/read.js'

// The dashboard's batch: many jobs' analytics in one statement, so in one snapshot, each job's
// figures made of the single-job statement's own parts (jobs/analytics/read.ts): the same
// summaries, the same bins, the same text, byte for byte.

/**
 * One asked job: its figures, or null when it is not the caller's (missing or another
 * organization's); `known` when their version is the one the caller said it keeps an answer
 * of: then only the version and the counts are read, the bins and the comparison are not.
 */
export interface AskedJob { jobId: string, found: AnalyticsText | null, known: boolean }

const BatchRow = Type.Object({ ...AnalyticsRow.properties, asked: Type.String(), known: Type.Boolean() })
const BatchVersionRow = Type.Object({ asked: Type.String(), version: Type.String(), rules_found: Type.Boolean() })

/**
 * The ids as one parameter: checked UUIDs, sent as text (the reader sends scalars only); with
 * `known`, beside each the version of its kept answer (`''`: none; versions hold digits and colons only).
 */
const ASKED = (jobIds: string[], known?: string[]): Sql => known === undefined
  ? sql`unnest(string_to_array(${jobIds.join(',')}, ',')::uuid[]) WITH ORDINALITY AS ask(id, n)`
  : sql`unnest(string_to_array(${jobIds.join(',')}, ',')::uuid[], string_to_array(${known.join(',')}, ',', '')) WITH ORDINALITY AS ask(id, known, n)`

/** The job's figures are those of the answer the caller keeps. */
const KNOWN = sql`ask.known IS NOT DISTINCT FROM st.version`

/**
 * The analytics of each of `jobIds` (distinct, lower-case UUIDs), in their order: per job,
 * what jobAnalyticsText answers for it, all in one statement; `known[i]` the version of the
 * answer the caller keeps for `jobIds[i]` (`''` or absent: none), whose figures are then read
 * only if the version moved. Throws ZoneRulesMissing as jobAnalyticsText.
 */
export async function jobsAnalyticsText (reader: SqlReader, organizationId: string, jobIds: string[], options: AnalyticsOptions, known: string[] = []): Promise<AskedJob[]> {
  const { rules, weeks, compare } = options
  const screensReadMax = options.screensReadMax ?? 0
  const rows = await reader.rows(BatchRow, sql`
    WITH rules AS MATERIALIZED (SELECT * FROM zone_rules_of(${rules.set}, ${rules.zone}))
    SELECT found.rules_found, ask.id::text AS asked, j.id AS job_id, st.completed, st.in_progress, st.expired, st.version,
           j.id IS NOT NULL AND ${KNOWN} AS known, ${JOB_BINS(rules, weeks, screensReadMax, compare, KNOWN)}
    FROM (SELECT ${RULES_FOUND(rules)} AS rules_found) found
    CROSS JOIN ${ASKED(jobIds, jobIds.map((_, i) => known[i] ?? ''))}
    LEFT JOIN jobs j ON j.id = ask.id AND j.organization_id = ${organizationId}::uuid
    LEFT JOIN LATERAL (
      SELECT coalesce(sum(completed), 0)::int AS completed, coalesce(sum(in_progress), 0)::int AS in_progress,
             coalesce(sum(expired), 0)::int AS expired, ${VERSION_OF(sql`c`)} AS version
      FROM (${VERSIONED_SUMMARY_ROWS(sql`completed, in_progress, expired, `)}) c
    ) st ON true
    ${compare === undefined ? empty : JOB_COMPARISON(rules, compare, screensReadMax, KNOWN)}
    ORDER BY ask.n`)
  if (rows[0]?.rules_found === false) throw new ZoneRulesMissing(rules)
  return rows.map(row => ({
    jobId: row.asked,
    found: row.job_id === null ? null : analyticsTextOf(row, compare !== undefined),
    known: row.known,
  }))
}

/**
 * The version of each asked job's figures (analyticsVersion's), null for one that is not the
 * caller's, in the order asked: what a 304 of the batch costs, one read of the jobs' summary
 * rows, no screens and no bins. With `rules`, also whether the database has them (as analyticsVersion).
 * The rows of all the jobs read at once and grouped, rather than job by job (a lateral read):
 * 0.54-0.57 against 0.71-0.89 ms for 50 jobs (300 runs each of both texts, warm, on the dashboard bench's data).
 */
export async function jobsAnalyticsVersions (reader: SqlReader, organizationId: string, jobIds: string[], rules?: ZoneRulesRef): Promise<{ versions: Array<string | null>, rulesFound: boolean }> {
  const rows = await reader.rows(BatchVersionRow, sql`
    WITH ask AS MATERIALIZED (SELECT * FROM ${ASKED(jobIds)}),
    mine AS MATERIALIZED (SELECT id FROM jobs WHERE id IN (SELECT id FROM ask) AND organization_id = ${organizationId}::uuid),
    st AS (SELECT c.job_id, ${VERSION_OF(sql`c`)} AS version
           FROM (${VERSIONED_SUMMARY_ROWS(sql`job_id, `, sql`IN (SELECT id FROM mine)`)}) c GROUP BY c.job_id)
    SELECT ask.id::text AS asked, CASE WHEN m.id IS NULL THEN '' ELSE coalesce(st.version, ${EMPTY_VERSION}) END AS version, ${rules === undefined ? sql`true` : RULES_FOUND(rules)} AS rules_found
    FROM ask LEFT JOIN mine m ON m.id = ask.id LEFT JOIN st ON st.job_id = ask.id
    ORDER BY ask.n`)
  return { versions: rows.map(row => row.version === '' ? null : row.version), rulesFound: rows[0]?.rules_found ?? true }
}

/** VERSION_OF over no rows: a job with no summary row and no delta. */
const EMPTY_VERSION = sql`'0:0:0'`
