import { ReadElsewhere } from '../db/replicas.js'
import type { SqlReader } from '../db/rows.js'
import type { JobStatus, ScreenStatus } from '../generated/prisma/enums.js'
import { Prisma as PrismaSql } from '../generated/prisma/client.js'
import { bounded, MAX_IN_PROGRESS, snapshotText, type Snapshot } from '../sync/snapshot.js'

// Queries only. Every method takes the caller's organization and scopes inside the query
// itself; a null result is the caller's 404. Each answer is one statement: the query
// builder would need three (job, question count, screens by status), and a request pays a
// round trip and Prisma's per-query work for each. See docs/performance.md.
//
// Screen figures come from the summaries that triggers keep (job_screen_stats,
// job_completion_segments, job_completion_boundaries; docs/summaries-design.md), never from
// the screens themselves: a job's cost does not grow with its screens. Averages divide exact
// numeric sums, trimmed so that the result does not depend on how the sum was reached:
// `averageOf` below, the same expression as the on-read computation the tests and the
// benchmark compare against.

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

export interface JobWithStats {
  job: JobRow
  questionCount: number
  /** Screens in any status. */
  interviewCount: number
  /** Mean score of the completed screens that have one; null when none has. */
  averageScore: number | null
}

type JobWithStatsRow = JobRow & Omit<JobWithStats, 'job'>

/**
 * The mean of scores summed exactly: `sum` a numeric sum, `count` how many were summed.
 * trim_scale makes the division's precision depend on the sum's value only, not on the
 * scale it carries from additions (numeric keeps the largest scale it has seen).
 */
const averageOf = (sum: PrismaSql.Sql, count: PrismaSql.Sql): PrismaSql.Sql =>
  PrismaSql.sql`(trim_scale(${sum}) / nullif(${count}, 0))::float8`

/**
 * A job's (`j.id`) figures as stored: its summary rows plus the deltas not yet folded into them
 * (migration 20261123200000_summary_deltas). Their sum is exact at every instant; a writer
 * appends deltas and never touches a summary row.
 */
const SUMMARY_ROWS = (columns: PrismaSql.Sql): PrismaSql.Sql => PrismaSql.sql`
  SELECT ${columns} FROM job_screen_stats WHERE job_id = j.id
  UNION ALL
  SELECT ${columns} FROM screen_summary_deltas WHERE job_id = j.id`

// Jobs with their counts, from `source` (a table or subquery aliased j), plus `more`
// (`, column…` of the source): the lateral subqueries run once per job of the source, each
// an index scan of that job's few rows (questions; at most 8 slots of summary).
const jobsWithStats = (source: PrismaSql.Sql, more: PrismaSql.Sql = PrismaSql.empty): PrismaSql.Sql => PrismaSql.sql`
  SELECT j.id, j.user_id AS "userId", j.title, j.company_name AS "companyName", j.description,
         j.status::text AS status, j.slug, j.share_token AS "shareToken", j.logo_url AS "logoUrl",
         j.brand_color AS "brandColor", j.show_service_branding AS "showServiceBranding",
         j.eu_candidates_allowed AS "euCandidatesAllowed", j.created_at AS "createdAt", j.updated_at AS "updatedAt",
         q.count AS "questionCount", s.count AS "interviewCount", s.average AS "averageScore"${more}
  FROM ${source} j
  CROSS JOIN LATERAL (SELECT count(*)::int AS count FROM questions WHERE job_id = j.id) q
  CROSS JOIN LATERAL (
    SELECT coalesce(sum(in_progress + completed + expired), 0)::int AS count, ${averageOf(PrismaSql.sql`sum(score_sum)`, PrismaSql.sql`sum(scored)`)} AS average
    FROM (${SUMMARY_ROWS(PrismaSql.sql`in_progress, completed, expired, scored, score_sum`)}) st
  ) s`

function withStats ({ questionCount, interviewCount, averageScore, ...job }: JobWithStatsRow): JobWithStats {
  return { job, questionCount, interviewCount, averageScore }
}

/** A job with its counts; null when not the caller's. */
export async function findJob (reader: SqlReader, organizationId: string, jobId: string): Promise<JobWithStats | null> {
  const rows = await reader.rows<JobWithStatsRow[]>(PrismaSql.sql`${jobsWithStats(PrismaSql.sql`jobs`)}
    WHERE j.id = ${jobId}::uuid AND j.organization_id = ${organizationId}::uuid`)
  return rows[0] === undefined ? null : withStats(rows[0])
}

/**
 * What the statement can see, as a sync token's point (src/sync/snapshot.ts): its snapshot,
 * `xmin:xmax:in-progress`. On a standby, pg_current_snapshot() lists no transaction in
 * progress (a standby's snapshot keeps them all among subtransactions, which it leaves out),
 * so the primary's transactions in progress below xmax would pass for visible: there, the
 * point is `xmin:xmin:` instead (every transaction from the oldest in progress counts as not
 * seen). Conservative: a sync from it reports a little more, never less.
 */
const READER_SNAPSHOT = PrismaSql.sql`(CASE WHEN pg_is_in_recovery()
  THEN pg_snapshot_xmin(pg_current_snapshot())::text || ':' || pg_snapshot_xmin(pg_current_snapshot())::text || ':'
  ELSE pg_current_snapshot()::text END)`

export interface JobPosition { createdAt: Date, id: string }

/** A page size is written into a statement's text (see listJobs): only a checked integer. */
function checkLimit (limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`)
}

/**
 * One page of the organization's jobs, newest first (ties broken by id), after `after`:
 * a keyset scan of the (organization, [status,] created_at, id) index. The position is a row comparison, which PostgreSQL uses as the index scan's start; the
 * equivalent `created_at < t OR (created_at = t AND id < i)` is only a filter, so page n
 * read and dropped the n - 1 pages before it (measured: 380 rows dropped on page 20).
 */
export async function listJobs (reader: SqlReader, organizationId: string, options: { limit: number, status?: JobStatus, after?: JobPosition }): Promise<{ jobs: JobWithStats[], hasMore: boolean } & StatementPoint> {
  const { after, status } = options
  // The limit is written into the statement rather than bound: with a bound LIMIT the
  // planner cannot cost a generic plan and re-plans every execution (measured with
  // auto_explain: a custom plan each time); written in, the prepared statement keeps a
  // generic plan. At most 100 texts, one per limit, and only from a checked integer.
  checkLimit(options.limit)
  // `limit + 1` rows tell whether there is a next page; the counts are computed for the
  // first `limit` only. The page is joined to one row of what the statement could see
  // (SYNC_POINT, for the walk's sync token; the first page also reads the database's history),
  // so that an empty page has it too, from the same snapshot as its (absent) rows.
  const rows = await reader.rows<Array<Nullable<JobWithStatsRow> & { hasMore: boolean | null, snapshot: string, generation: number, history?: string }>>(PrismaSql.sql`
    WITH page AS (
      SELECT * FROM jobs j
      WHERE j.organization_id = ${organizationId}::uuid
        ${status !== undefined ? PrismaSql.sql`AND j.status = ${status}::job_status` : PrismaSql.empty}
        ${after !== undefined ? PrismaSql.sql`AND (j.created_at, j.id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)` : PrismaSql.empty}
      ORDER BY j.created_at DESC, j.id DESC
      LIMIT ${PrismaSql.raw(String(options.limit + 1))}
    )
    SELECT point.*, r.* FROM (${SYNC_POINT(after === undefined && status === undefined)}) point LEFT JOIN (
      ${jobsWithStats(
        PrismaSql.sql`(SELECT *, (SELECT count(*) FROM page) > ${PrismaSql.raw(String(options.limit))} AS more FROM page ORDER BY created_at DESC, id DESC LIMIT ${PrismaSql.raw(String(options.limit))})`,
        PrismaSql.sql`, j.more AS "hasMore"`
      )}
    ) r ON true
    ORDER BY r."createdAt" DESC, r.id DESC`)
  const { snapshot, generation, history } = rows[0]!
  const listed = rows.filter((row): row is JobWithStatsRow & { hasMore: boolean, snapshot: string, generation: number, history?: string } => row.id !== null)
  return {
    jobs: listed.map(({ hasMore: _, snapshot: __, generation: ___, history: ____, ...row }) => withStats(row)),
    hasMore: listed[0]?.hasMore ?? false,
    snapshot,
    generation,
    ...(history !== undefined ? { history } : {}),
  }
}

type Nullable<T> = { [K in keyof T]: T[K] | null }

/**
 * What a page's statement could see (READER_SNAPSHOT), the change log's generation, and (when
 * asked for) which database history it read (DATABASE_HISTORY).
 */
export interface StatementPoint { snapshot: string, generation: number, history?: string }

/**
 * The database history the statement reads (`system identifier:database oid`, migration
 * 20261126140200_sync_token_history; src/sync/history.ts): what a dump or a copy does not
 * carry to another cluster or database. It reads pg_control and the catalog (about 20 µs,
 * measured with pgbench): read by a walk's first page and by every sync page, not by a walk's
 * later pages, which carry it in their cursor.
 */
const DATABASE_HISTORY = PrismaSql.sql`database_history()`

/**
 * One row: the statement's snapshot and the change log's generation, which
 * `npm run admin -- expire-sync-tokens` (and a TRUNCATE of jobs) changes so that every token
 * made before answers 410 (migration 20261125140000_job_changes); with `history`, the
 * database's (DATABASE_HISTORY).
 */
const SYNC_POINT = (history: boolean): PrismaSql.Sql => PrismaSql.sql`SELECT ${READER_SNAPSHOT} AS snapshot, (SELECT generation FROM job_changes_horizon) AS generation${history ? PrismaSql.sql`, ${DATABASE_HISTORY} AS history` : PrismaSql.empty}`

/** Where a sync is in the change log: the last entry (transaction, job) a page answered. */
export interface ChangePosition { xid: string, jobId: string }

/** A sync page, with what its statement could see (StatementPoint). */
export interface SyncPage extends StatementPoint {
  /** Jobs changed since the token and still the organization's, in the log's order. */
  jobs: JobWithStats[]
  /** Jobs changed since the token and no longer the organization's. */
  deletedIds: string[]
  /** The position of the page's last entry, when there are more. */
  nextAfter: ChangePosition | undefined
  /**
   * The change log no longer reaches back to the token, was expired since, or has not reached
   * the token's point (the database went back in time): it cannot be answered exactly.
   */
  expired: boolean
  /** The database history the statement read (DATABASE_HISTORY). */
  history: string
}

// Before every entry of the log (no transaction has id 0, no job the nil uuid).
const LOG_START: ChangePosition = { xid: '0', jobId: '00000000-0000-0000-0000-000000000000' }

/**
 * One page of the jobs changed since `since` (a snapshot: a change is after it when its
 * transaction is not visible in it), in the order of the change log's entries (transaction,
 * job) after `after`: from the change log (job_changes) and the screens' deltas not folded
 * into it yet, which the fold moves into the log in one commit, with the same transaction and
 * job, so at the same place in that order. One statement, so one snapshot for the log, the
 * deltas and the jobs. Without `analytics` (a key that cannot read analytics), only the
 * changes of what a job's item shows.
 *
 * What it reads is bounded by the page: the entries after the token are those of transactions
 * from its xmax on, of the (at most MAX_IN_PROGRESS) transactions it lists as in progress, and
 * the rows marked `collapsed` in between (such a row stands for several transactions up to
 * its own: it counts as changed unless the token's xmin is above it; migration
 * 20261125140000_job_changes). Each is an index range of the organization's log from `after`
 * on, read for `limit + 1` entries at most (the collapsed rows through a partial index of
 * their own), so a page never reads the entries visible in the token that lie between its
 * xmin and xmax, nor those of earlier pages. The unfolded deltas of every organization are
 * read whole (few: the fold runs every second).
 */
export async function syncPage (reader: SqlReader, organizationId: string, options: { since: { seen: Snapshot, generation: number }, limit: number, after?: ChangePosition, analytics: boolean }): Promise<SyncPage> {
  checkLimit(options.limit)
  const seen = bounded(options.since.seen)
  const after = options.after ?? LOG_START
  const take = PrismaSql.raw(String(options.limit + 1))
  const token = PrismaSql.sql`${snapshotText(seen)}::pg_snapshot`
  const org = PrismaSql.sql`${organizationId}::uuid`
  const from = (alias: string): PrismaSql.Sql => PrismaSql.sql`(${PrismaSql.raw(alias)}.xid, ${PrismaSql.raw(alias)}.job_id) > (${after.xid}::xid8, ${after.jobId}::uuid)`
  // Without analytics, the changes of analytics alone are skipped (migration
  // 20261126140300_job_changes_analytics_only): the ranges read the log's partial index of the
  // others, so a page does not read past what it skips; a transaction's unfolded deltas of a
  // job count when their sums of interviews, scored screens or scores are not zero.
  const shown = options.analytics ? PrismaSql.empty : PrismaSql.sql`AND NOT c.analytics_only`
  const logRange = (condition: PrismaSql.Sql): PrismaSql.Sql => PrismaSql.sql`(
      SELECT c.xid, c.job_id FROM job_changes c
      WHERE c.organization_id = ${org} AND ${condition} ${shown} AND ${from('c')}
      ORDER BY c.xid, c.job_id LIMIT ${take})`
  // Always MAX_IN_PROGRESS of them (null: none), so that the statement's text is one.
  const inProgress = Array.from({ length: MAX_IN_PROGRESS }, (_, i) => logRange(PrismaSql.sql`c.xid = ${seen.xip[i]?.toString() ?? null}::xid8`))
  const rows = await reader.rows<Array<Nullable<JobWithStatsRow> & { changedId: string | null, nextXid: string | null, nextJob: string | null, hasMore: boolean, snapshot: string, generation: number, prunedPast: boolean, first: number | null, ahead: boolean, history: string }>>(PrismaSql.sql`
    WITH
    -- Every organization's, filtered first: the deltas not folded yet are few (the fold runs
    -- every second), the organization's jobs may be many.
    fresh_deltas AS MATERIALIZED (
      SELECT d.xid, d.job_id FROM screen_summary_deltas d
      WHERE d.xid >= ${seen.xmin.toString()}::xid8 AND NOT pg_visible_in_snapshot(d.xid, ${token}) AND ${from('d')}
      GROUP BY d.xid, d.job_id
      ${options.analytics ? PrismaSql.empty : PrismaSql.sql`HAVING sum(d.in_progress + d.completed + d.expired) <> 0 OR sum(d.scored) <> 0 OR sum(d.score_sum) <> 0`}
    ),
    positions AS MATERIALIZED (
      SELECT DISTINCT xid, job_id FROM (
        ${logRange(PrismaSql.sql`c.xid >= ${seen.xmax.toString()}::xid8`)}
        ${PrismaSql.join(inProgress.map(range => PrismaSql.sql`UNION ALL ${range}`), ' ')}
        UNION ALL ${logRange(PrismaSql.sql`c.collapsed AND c.xid >= ${seen.xmin.toString()}::xid8 AND c.xid < ${seen.xmax.toString()}::xid8 AND pg_visible_in_snapshot(c.xid, ${token})`)}
        UNION ALL (SELECT f.xid, f.job_id FROM fresh_deltas f JOIN jobs dj ON dj.id = f.job_id AND dj.organization_id = ${org}
                   ORDER BY f.xid, f.job_id LIMIT ${take})
      ) entries
      ORDER BY xid, job_id LIMIT ${take}
    ),
    page AS (SELECT xid, job_id, row_number() OVER (ORDER BY xid, job_id) AS place FROM positions),
    meta AS (
      SELECT point.*, (SELECT count(*) FROM positions) > ${PrismaSql.raw(String(options.limit))} AS "hasMore",
             (SELECT xid::text FROM page WHERE place = ${PrismaSql.raw(String(options.limit))}) AS "nextXid",
             (SELECT job_id::text FROM page WHERE place = ${PrismaSql.raw(String(options.limit))}) AS "nextJob",
             (SELECT h.pruned_through >= ${seen.xmin.toString()}::xid8 FROM job_changes_horizon h) AS "prunedPast",
             -- On the primary, a token can only be behind the server's snapshot: ahead, the
             -- database went back (a restore, a lossy failover) and may hand its transactions'
             -- ids out again. A standby may lag behind a token another server made.
             (NOT pg_is_in_recovery() AND ${seen.xmax.toString()}::xid8 > pg_snapshot_xmax(pg_current_snapshot())) AS ahead
      FROM (${SYNC_POINT(true)}) point
    )
    SELECT meta.*, r.* FROM meta LEFT JOIN (
      ${jobsWithStats(
        PrismaSql.sql`(SELECT p.job_id AS changed_id, p.first, jobs.* FROM (SELECT job_id, min(place)::int AS first FROM page WHERE place <= ${PrismaSql.raw(String(options.limit))} GROUP BY job_id) p
                       LEFT JOIN jobs ON jobs.id = p.job_id AND jobs.organization_id = ${org})`,
        PrismaSql.sql`, j.changed_id AS "changedId", j.first`
      )}
    ) r ON true
    ORDER BY r.first`)
  const meta = rows[0]!
  const listed = rows.filter(row => row.changedId !== null)
  return {
    jobs: listed.filter(row => row.id !== null).map(({ changedId: _, nextXid: __, nextJob: ___, hasMore: ____, snapshot: _____, generation: ______, prunedPast: _______, first: ________, ahead: _________, history: __________, ...row }) => withStats(row as JobWithStatsRow)),
    deletedIds: listed.filter(row => row.id === null).map(row => row.changedId!),
    nextAfter: meta.hasMore && meta.nextXid !== null && meta.nextJob !== null ? { xid: meta.nextXid, jobId: meta.nextJob } : undefined,
    snapshot: meta.snapshot,
    generation: meta.generation,
    expired: meta.prunedPast || meta.ahead || meta.generation !== options.since.generation,
    history: meta.history,
  }
}

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
const VERSIONED_SUMMARY_ROWS = (columns: PrismaSql.Sql = PrismaSql.empty): PrismaSql.Sql => PrismaSql.sql`
  SELECT ${columns}changes, version, changes_hash AS hash FROM job_screen_stats WHERE job_id = j.id
  UNION ALL
  SELECT ${columns}1, changed_at, hashint8extended(id, 0) FROM screen_summary_deltas WHERE job_id = j.id`
const VERSION_OF = (rows: PrismaSql.Sql): PrismaSql.Sql =>
  PrismaSql.sql`coalesce(sum(${rows}.changes), 0) || ':' || coalesce(max(${rows}.version), 0) || ':' || coalesce(bit_xor(${rows}.hash), 0)`
const SUMMARY_VERSION = PrismaSql.sql`(SELECT ${VERSION_OF(PrismaSql.sql`c`)} FROM (${VERSIONED_SUMMARY_ROWS()}) c)`

/**
 * A small job's weekly bins, from its screens (an index-only range scan of `(job_id, status,
 * completed_at, score)`, as the on-read baseline reads them), as the JSON text of an array of
 * [week, count, average] ascending by week, or null when no week has a completion: the same
 * values as `job_weekly_bins` returns for such a job, the average the same expression
 * (averageOf). Built as text rather than with json_agg(json_build_array(…)): PostgreSQL
 * looks up each value's type and output function for every json_build_array, which cost a
 * 200-screen job's request more than all of its text concatenation (counted with callgrind:
 * docs/performance.md, "Small analytics: the bins in the statement"). Each part is valid JSON
 * as it is: a `YYYY-MM-DD` week, an int4, and a finite double as float8out writes it (as
 * json_build_array writes it too), or null. With `weeks`, only the bins of those weeks; the
 * condition is in the text only then, where it costs an evaluation per screen.
 */
const SMALL_JOB_BINS = (weeks: WeekRange | undefined): PrismaSql.Sql => PrismaSql.sql`(
      SELECT '[' || string_agg('["' || to_char(w.week, 'YYYY-MM-DD') || '",' || w.completed || ','
                               || coalesce(${averageOf(PrismaSql.sql`w.score_sum`, PrismaSql.sql`w.scored`)}::text, 'null') || ']', ',' ORDER BY w.week) || ']'
      FROM (
        SELECT date_trunc('week', zone_local_time(s.completed_at, rules.transitions, rules.offsets)) AS week, count(*)::int AS completed,
               count(s.score)::int AS scored, coalesce(sum(s.score::text::numeric), 0) AS score_sum
        FROM rules, screens s
        WHERE s.job_id = j.id AND s.status = 'completed'
        GROUP BY 1
      ) w
      ${weeks !== undefined ? PrismaSql.sql`WHERE w.week BETWEEN ${weeks.first}::timestamp AND ${weeks.last}::timestamp` : PrismaSql.empty})`

/** The zone rules a statement computes local weeks with: a set loaded in the database (src/zones/store.ts) and one of its zones. */
export interface ZoneRulesRef { set: string, zone: string }

/** The rules a statement was to read are not in its database: a replica that has not replayed their load yet. */
export class ZoneRulesMissing extends ReadElsewhere {
  constructor (readonly rules: ZoneRulesRef) { super(`zone rules ${rules.set} of ${rules.zone} are not in this database`) }
}

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
export async function jobAnalytics (reader: SqlReader, organizationId: string, jobId: string, options: { rules: ZoneRulesRef, weeks?: WeekRange, screensReadMax?: number }): Promise<VersionedAnalyticsRows | null> {
  const { rules, weeks } = options
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
  // One row, the bins as one JSON array of [week, count, average]: each row of a raw result
  // costs Prisma more than its bytes, and a JSON value is parsed natively where PostgreSQL
  // arrays are parsed character by character (measured: 7% of an analytics request's CPU).
  const screensReadMax = options.screensReadMax ?? 0
  const rows = await reader.rows<Array<{ rules_found: boolean, job_id: string | null, completed: number, in_progress: number, expired: number, version: string, bins: string | null }>>(PrismaSql.sql`
    WITH rules AS MATERIALIZED (SELECT * FROM zone_rules_of(${rules.set}, ${rules.zone}))
    SELECT found.rules_found, j.id AS job_id, st.completed, st.in_progress, st.expired, st.version,
           CASE WHEN j.id IS NULL OR NOT found.rules_found THEN NULL
                WHEN st.completed > ${screensReadMax}::int
                  THEN job_weekly_bins_in_zone(j.id, ${rules.set}, ${rules.zone}, ${weeks?.first ?? null}::timestamp, ${weeks?.last ?? null}::timestamp)
                ELSE ${SMALL_JOB_BINS(weeks)} END AS bins
    FROM (SELECT EXISTS (SELECT FROM zone_rules WHERE rule_set = ${rules.set} AND zone = ${rules.zone}) AS rules_found) found
    LEFT JOIN jobs j ON j.id = ${jobId}::uuid AND j.organization_id = ${organizationId}::uuid
    LEFT JOIN LATERAL (
      SELECT coalesce(sum(completed), 0)::int AS completed, coalesce(sum(in_progress), 0)::int AS in_progress,
             coalesce(sum(expired), 0)::int AS expired, ${VERSION_OF(PrismaSql.sql`c`)} AS version
      FROM (${VERSIONED_SUMMARY_ROWS(PrismaSql.sql`completed, in_progress, expired, `)}) c
    ) st ON true`)
  const row = rows[0]!
  if (!row.rules_found) throw new ZoneRulesMissing(rules)
  if (row.job_id === null) return null
  return {
    byStatus: { completed: row.completed, in_progress: row.in_progress, expired: row.expired },
    weeks: row.bins === null ? [] : (JSON.parse(row.bins) as Array<[string, number, number | null]>).map(([week, count, averageScore]) => ({ week, count, averageScore })),
    version: row.version,
  }
}

/**
 * The job's summary version (see SUMMARY_VERSION) alone: what a 304 of analytics costs, one
 * index read of at most 8 rows. Null when the job is not the caller's.
 */
export async function analyticsVersion (reader: SqlReader, organizationId: string, jobId: string): Promise<string | null> {
  const rows = await reader.rows<Array<{ version: string }>>(PrismaSql.sql`
    SELECT ${SUMMARY_VERSION} AS version FROM jobs j WHERE j.id = ${jobId}::uuid AND j.organization_id = ${organizationId}::uuid`)
  return rows[0]?.version ?? null
}
