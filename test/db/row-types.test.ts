import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { Kind, OptionalKind, Type, type TObject, type TSchema } from '@sinclair/typebox'
import pg from 'pg'
import t, { type Test } from 'tap'
import { getConstructionPlans } from 'pg-boss'
import { expireSyncTokens } from '../../src/admin/sync-tokens.js'
import { insertApiKey } from '../../src/admin/commands.js'
import { currentPoint } from '../../src/changes/point.js'
import { databaseFunctions, databaseTriggers } from '../../src/db/current-functions.js'
import type { SqlReader, SqlWriter } from '../../src/db/sql-reader.js'
import { foldBatch } from '../../src/db/summary-fold.js'
import { completeOldestScreen, demoJob } from '../../src/demo/recruiter.js'
import { databaseAnswers } from '../../src/health/routes.js'
import type { Prisma as PrismaSql } from '../../src/generated/prisma/client.js'
import { analyticsVersion, jobAnalytics } from '../../src/jobs/analytics/read.js'
import { jobsAnalyticsText, jobsAnalyticsVersions } from '../../src/jobs/dashboard/read-jobs-analytics.js'
import { organizationAnalyticsText, organizationAnalyticsVersion } from '../../src/jobs/dashboard/read-organization-analytics.js'
import { findJob } from '../../src/jobs/job/find-job.js'
import { JobWithStatsRowSchema } from '../../src/jobs/job/job-rows.js'
import { listJobs } from '../../src/jobs/list/list.js'
import { changesPage } from '../../src/changes/changes-page.js'
import { syncPage } from '../../src/jobs/sync/sync-page.js'
import { quietSince } from '../../src/changes/quiet.js'
import { leaseEndpoints } from '../../src/webhooks/batch.js'
import { listDeliveries } from '../../src/webhooks/deliveries.js'
import { deliveryEndpoint } from '../../src/webhooks/delivery-endpoint.js'
import { dispatchCandidates } from '../../src/webhooks/dispatch-candidates.js'
import { takeDispatchLock, walInsertPosition } from '../../src/webhooks/dispatch-lock.js'
import { lockEndpoint, replaceSecret } from '../../src/webhooks/endpoints.js'
import { claimKey, firstAnswer } from '../../src/webhooks/idempotency-keys.js'
import { anyNoticeDue, claimNotices, noticeDue, noticeRecipients } from '../../src/webhooks/notice-claims.js'
import { attemptOf, givenUp, givenUpEvents, givenUpScheduled, laterAttempts, scheduledIds } from '../../src/webhooks/recovery-reads.js'
import { recordTestAttempt } from '../../src/webhooks/test-event.js'
import { undeliveredAges } from '../../src/webhooks/webhook-metrics.js'
import { keepZoneRules, loadZoneRules } from '../../src/zones/store.js'
import { zoneRules } from '../../src/zones/rules.js'
import { createTestDatabase, openTemplatePGlite, serverUrl } from '../helpers/database.js'
import { describeColumns, type DescribedColumn } from '../helpers/describe.js'

// Every raw statement's row type against what PostgreSQL says the statement returns. A
// statement's rows are typed by the schema it hands SqlReader.rows (src/db/sql-reader.ts); here each
// statement, in each of its texts, is described on the database (Parse and Describe: its
// columns, their types and, for plain table columns, NOT NULL) and compared with that schema:
// the same column names, a type rows.ts converts to what the schema says, and no column that
// can be null declared as never null. Prisma's TypedSQL would generate such types, but its
// generation needs Prisma's native schema engine (the WebAssembly one fails on it offline) and
// its `$queryRawTyped` costs about twice the driver adapter per statement (docs/decisions.md,
// "Departures from the design card").

class Captured extends Error {}
interface Statement { name: string, row: TSchema, sql: PrismaSql.Sql }
const statements: Statement[] = []
async function capture (name: string, call: (reader: SqlReader & SqlWriter) => Promise<unknown>): Promise<void> {
  const reader: SqlReader & SqlWriter = { rows: async (row, sql) => { statements.push({ name, row, sql }); throw new Captured() }, execute: async () => { throw new Error(`${name}: wrote before it read`) } }
  await call(reader).then(() => { throw new Error(`${name}: sent no statement`) }, (error: unknown) => { if (!(error instanceof Captured)) throw error })
}

const ORG = '00000000-0000-4000-8000-000000000001'
const JOB = '00000000-0000-4000-8000-000000000002'
const rules = { set: zoneRules().id, zone: 'Europe/Berlin' }
const since = { seen: { xmin: 5n, xmax: 9n, xip: [6n, 7n] }, generation: 1 }
await capture('findJob', async r => await findJob(r, ORG, JOB))
await capture('listJobs, a walk\'s first page', async r => await listJobs(r, ORG, { limit: 20 }))
await capture('listJobs, by status', async r => await listJobs(r, ORG, { limit: 20, status: 'active' }))
await capture('listJobs, a later page', async r => await listJobs(r, ORG, { limit: 20, after: { createdAt: new Date(), id: JOB } }))
await capture('syncPage', async r => await syncPage(r, ORG, { since, limit: 10, analytics: true }))
await capture('syncPage, without analytics, from a cursor', async r => await syncPage(r, ORG, { since, limit: 10, analytics: false, after: { xid: '7', jobId: JOB } }))
await capture('changesPage', async r => await changesPage(r, ORG, { since, limit: 10, analytics: true }))
await capture('changesPage, without analytics, from a cursor', async r => await changesPage(r, ORG, { since, limit: 10, analytics: false, after: { xid: '7', jobId: JOB } }))
await capture('quietSince', async r => await quietSince(r, [{ organizationId: ORG, since: since.seen }]))
await capture('jobAnalytics', async r => await jobAnalytics(r, ORG, JOB, { rules, screensReadMax: 500 }))
await capture('jobAnalytics, a range', async r => await jobAnalytics(r, ORG, JOB, { rules, weeks: { first: '2026-01-05', last: '2026-03-02' } }))
// compare=previous_period: 2026-01-05..2026-03-02 (9 weeks) beside the 9 weeks before it.
const compare = { previous: { from: '2025-11-03', to: '2025-12-29' }, weeks: { first: '2025-11-03', last: '2026-03-02' }, splitAt: '2026-01-05' }
const ranged = { rules, weeks: { first: '2026-01-05', last: '2026-03-02' }, compare }
await capture('jobAnalytics, compared with the previous period', async r => await jobAnalytics(r, ORG, JOB, ranged))
await capture('jobAnalytics, compared, from the summaries', async r => await jobAnalytics(r, ORG, JOB, { ...ranged, screensReadMax: 0 }))
await capture('jobsAnalyticsText, compared with the previous period', async r => await jobsAnalyticsText(r, ORG, [JOB, ORG], { ...ranged, screensReadMax: 500 }))
await capture('organizationAnalyticsText, compared with the previous period', async r => await organizationAnalyticsText(r, { organizationId: ORG }, ranged))
await capture('jobsAnalyticsText', async r => await jobsAnalyticsText(r, ORG, [JOB, ORG], { rules, screensReadMax: 500 }))
await capture('jobsAnalyticsText, a range', async r => await jobsAnalyticsText(r, ORG, [JOB], { rules, weeks: { first: '2026-01-05', last: '2026-03-02' } }))
await capture('jobsAnalyticsVersions', async r => await jobsAnalyticsVersions(r, ORG, [JOB, ORG]))
await capture('organizationAnalyticsText', async r => await organizationAnalyticsText(r, { organizationId: ORG }, { rules, screensReadMax: 500 }))
await capture('organizationAnalyticsText, filtered, a range', async r => await organizationAnalyticsText(r, { organizationId: ORG, statuses: ['active', 'paused'], userId: JOB }, { rules, weeks: { first: '2026-01-05', last: '2026-03-02' } }))
await capture('organizationAnalyticsVersion', async r => await organizationAnalyticsVersion(r, { organizationId: ORG }))
await capture('analyticsVersion', async r => await analyticsVersion(r, ORG, JOB))
await capture('analyticsVersion, with the rules', async r => await analyticsVersion(r, ORG, JOB, rules))
await capture('deliveryEndpoint', async r => await deliveryEndpoint(r, JOB))
await capture('listDeliveries', async r => await listDeliveries(r, JOB, 20))
await capture('listDeliveries, a later page', async r => await listDeliveries(r, JOB, 20, { at: new Date(), id: JOB }))
await capture('dispatchCandidates', async r => await dispatchCandidates(r))
await capture('leaseEndpoints', async r => await leaseEndpoints(r, [JOB], 1000))
const given = givenUp(JOB, new Date())
await capture('currentPoint', async r => await currentPoint(r))
await capture('lockEndpoint', async r => await lockEndpoint(r, ORG, JOB))
await capture('replaceSecret', async r => await replaceSecret(r, ORG, JOB, new Uint8Array(40), 60))
await capture('takeDispatchLock', async r => await takeDispatchLock(r))
await capture('walInsertPosition', async r => await walInsertPosition(r))
await capture('claimKey', async r => await claimKey(r, JOB, 'key', new Uint8Array(32)))
await capture('firstAnswer', async r => await firstAnswer(r, JOB, 'key'))
await capture('scheduledIds', async r => await scheduledIds(r, JOB))
await capture('attemptOf', async r => await attemptOf(r, JOB, JOB))
await capture('laterAttempts', async r => await laterAttempts(r, JOB, 'msg_x', new Date()))
await capture('givenUpEvents', async r => await givenUpEvents(r, given, ['msg_x'], 1001))
await capture('givenUpScheduled', async r => await givenUpScheduled(r, given, ['msg_x']))
await capture('anyNoticeDue', async r => await anyNoticeDue(r, noticeDue(10)))
await capture('claimNotices', async r => await claimNotices(r, noticeDue(10), 100))
await capture('noticeRecipients', async r => await noticeRecipients(r, [ORG]))
await capture('undeliveredAges', async r => await undeliveredAges(r, [JOB]))
await capture('keepZoneRules', async r => await keepZoneRules(r, rules.set))
await capture('loadZoneRules', async r => await loadZoneRules(r, 'Europe/Berlin'))
await capture('foldBatch', async r => await foldBatch(r))
await capture('expireSyncTokens', async r => await expireSyncTokens(r))
await capture('insertApiKey', async r => await insertApiKey(r, { userId: JOB, prefix: 'sk_test', hash: new Uint8Array(32) }))
await capture('demoJob', async r => await demoJob(r, JOB))
await capture('completeOldestScreen', async r => await completeOldestScreen(r, JOB, 50))
await capture('databaseFunctions', async r => await databaseFunctions(r))
await capture('databaseTriggers', async r => await databaseTriggers(r))
await capture('databaseAnswers', async r => await databaseAnswers(r))
await capture('recordTestAttempt', async r => await recordTestAttempt(r, JOB, new Date(), { event: { id: 'msg_test', type: 'webhook.test', subject: JOB, at: new Date().toISOString(), attempt: 1 }, outcome: 'delivered', statusCode: 204, error: null, durationMs: 1, nextAttemptAt: null }))

// What rows.ts makes of each PostgreSQL type (its converter), as TypeBox kinds.
const ROWS_TS: Record<string, string[]> = {
  text: ['String'],
  varchar: ['String'],
  bpchar: ['String'],
  name: ['String'],
  uuid: ['String'],
  int2: ['Integer', 'Number'],
  int4: ['Integer', 'Number'],
  float4: ['Number'],
  float8: ['Number'],
  int8: ['BigInt'],
  bool: ['Boolean'],
  timestamptz: ['Date'],
  bytea: ['Uint8Array'],
  timestamp: ['Date'],
  date: ['Date'],
  json: ['Unknown', 'Any'],
  jsonb: ['Unknown', 'Any'],
}

/** A column schema's kinds (a literal counts as its type) and whether it takes null. */
function kinds (schema: TSchema): { kinds: string[], nullable: boolean } {
  if (schema[Kind] === 'Union') {
    const parts = (schema.anyOf as TSchema[]).map(kinds)
    return { kinds: [...new Set(parts.flatMap(p => p.kinds))], nullable: parts.some(p => p.nullable) }
  }
  if (schema[Kind] === 'Null') return { kinds: [], nullable: true }
  if (schema[Kind] === 'Literal') return { kinds: [typeof schema.const === 'string' ? 'String' : typeof schema.const === 'number' ? 'Number' : 'Boolean'], nullable: false }
  return { kinds: [String(schema[Kind])], nullable: false }
}

/** What is wrong with `row` as the row of a statement returning `columns`; empty when nothing. */
function disagreements (row: TObject, columns: DescribedColumn[]): string[] {
  const problems: string[] = []
  const described = new Map(columns.map(c => [c.name, c]))
  for (const [name, schema] of Object.entries(row.properties)) {
    const column = described.get(name)
    if (column === undefined) {
      if (schema[OptionalKind] !== 'Optional') problems.push(`${name}: declared, not returned`)
      continue
    }
    const allowed = column.typtype === 'e' ? ['String'] : ROWS_TS[column.typname]
    const declared = kinds(schema)
    if (allowed === undefined) problems.push(`${name}: PostgreSQL type ${column.typname}, which rows.ts does not convert`)
    else if (declared.kinds.length === 0 || declared.kinds.some(k => !allowed.includes(k))) problems.push(`${name}: declared ${declared.kinds.join(' | ')}, returned ${column.typname} (rows.ts: ${allowed.join(' or ')})`)
    if (column.notNull === false && !declared.nullable) problems.push(`${name}: declared never null, but it is a column that can be null`)
  }
  for (const name of described.keys()) if (!(name in row.properties)) problems.push(`${name}: returned, not declared`)
  return problems
}

async function check (t: Test, on: { client: pg.ClientBase } | { pglite: PGlite }): Promise<void> {
  // The queue's tables, which two webhook statements read: pg-boss makes them when it first
  // starts (the embedded template has them; a server's test database may not).
  const present = 'SELECT to_regclass(\'pgboss.job\') IS NOT NULL AS present'
  const queue = getConstructionPlans('pgboss')
  if ('pglite' in on) {
    if ((await on.pglite.query<{ present: boolean }>(present)).rows[0]?.present !== true) await on.pglite.exec(queue)
  } else if ((await on.client.query<{ present: boolean }>(present)).rows[0]?.present !== true) await on.client.query(queue)
  for (const { name, row, sql } of statements) {
    const columns = await describeColumns(on, sql.text)
    t.same(disagreements(row as TObject, columns), [], `${name}: ${columns.length} columns as declared`)
  }
}

t.test('every request statement of src/ is here', async t => {
  const files = (dir: string): string[] => readdirSync(dir).flatMap(f => statSync(join(dir, f)).isDirectory() ? (f === 'generated' ? [] : files(join(dir, f))) : [join(dir, f)])
  const calls = files(join(import.meta.dirname, '../../src')).reduce((n, f) => n + (readFileSync(f, 'utf8').match(/\.rows\(/g) ?? []).length, 0)
  t.equal(new Set(statements.map(s => s.row)).size, calls, `${calls} calls of SqlReader.rows in src/, each with a row schema of its own`)
})

t.test('the check finds what it should: a type, a null and a name changed by hand', async t => {
  const pglite = await openTemplatePGlite()
  t.teardown(() => pglite.close())
  const columns = await describeColumns({ pglite }, statements.find(s => s.name === 'findJob')!.sql.text)
  t.same(disagreements(JobWithStatsRowSchema, columns), [])
  const altered = Type.Object({ ...JobWithStatsRowSchema.properties, questionCount: Type.String(), logoUrl: Type.String(), renamed: Type.Integer() })
  t.same(disagreements(altered, columns), [
    'logoUrl: declared never null, but it is a column that can be null',
    'questionCount: declared String, returned int4 (rows.ts: Integer or Number)',
    'renamed: declared, not returned',
  ])
})

t.test('on the embedded database', async t => {
  const pglite = await openTemplatePGlite()
  t.teardown(() => pglite.close())
  await check(t, { pglite })
})

t.test('on the PostgreSQL server', { skip: serverUrl === undefined ? 'needs TEST_DATABASE_URL' : false }, async t => {
  const db = await createTestDatabase()
  t.teardown(() => db.close())
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  t.teardown(() => client.end())
  await check(t, { client })
})
