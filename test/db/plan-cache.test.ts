import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { serverUrl } from '../helpers/database.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'

// Each request's statement is a named prepared statement (src/db/statement-names.ts), so
// that PostgreSQL plans it once per connection and then only binds and runs it. That holds
// only while PostgreSQL's plan cache settles on a generic plan: after five custom plans it
// keeps re-planning any statement whose generic plan it costs higher than the custom ones,
// and re-planning the analytics statement cost as much as running it (docs/performance.md,
// "Planning on every request"). Read from pg_prepared_statements, on the one connection the
// app has here: what PostgreSQL did, not what the code intends.

const skip = serverUrl === undefined ? 'needs TEST_DATABASE_URL: named statements are the server pool\'s (node-postgres); the embedded database has none' : false

t.test('every request statement runs on a generic plan once the plan cache has settled', { skip }, async t => {
  // No analytics answers kept (ANALYTICS_CACHE_BYTES): a repeated question would not run the statement whose plan is read.
  const { app, prisma } = await buildTestApp(t, { env: { DB_POOL_MAX: '1', SUMMARY_FOLD_INTERVAL_MS: '0', SYNC_PRUNE_INTERVAL_MS: '0', ANALYTICS_CACHE_BYTES: '0' } })
  const pro = await createTenant(prisma, { plan: 'pro' })
  const job = await createJob(prisma, pro, { questions: 3 })
  await createScreens(prisma, job.id, Array.from({ length: 40 }, (_, i) => ({ status: 'completed' as const, score: i, completedAt: new Date(Date.UTC(2026, 0, 1 + i)) })))
  const { sync_token: syncToken } = (await app.inject({ url: '/api/jobs?limit=20', headers: pro.auth })).json<{ sync_token: string }>()

  const operations: Array<[string, string, RegExp, Record<string, string>?]> = [
    ['get job', `/api/jobs/${job.id}`, /^\s*SELECT j\.id, j\.user_id/],
    ['analytics', `/api/jobs/${job.id}/analytics?tz=Europe/Berlin`, /^(?![\s\S]*w\.week BETWEEN)[\s\S]*job_weekly_bins/],
    // A text of its own: a small job's bins filter the weeks in the statement only with a
    // range (the weeks themselves are parameters, so one plan serves every range).
    ['analytics with a range', `/api/jobs/${job.id}/analytics?tz=Asia/Kolkata&from=2026-01-05&to=2026-02-02`, /job_weekly_bins[\s\S]*w\.week BETWEEN/],
    ['list jobs', '/api/jobs?limit=20', /WITH page AS/],
    ['sync', `/api/jobs?limit=20&changed_since=${encodeURIComponent(syncToken)}`, /fresh_deltas AS MATERIALIZED/],
    ['analytics, current ETag (304)', `/api/jobs/${job.id}/analytics?tz=Europe/Berlin`, /^\s*SELECT \(SELECT coalesce\(sum\(c\.changes\)/, { 'if-none-match': '*' }],
  ]

  const runs = 12
  for (const [name, url, , headers = {}] of operations) {
    for (let i = 0; i < runs; i++) {
      const res = await app.inject({ url, headers: { ...pro.auth, ...headers } })
      t.equal(res.statusCode, headers['if-none-match'] !== undefined ? 304 : 200, `${name} #${i + 1}`)
    }
  }
  const prepared = await app.database.prisma.$queryRaw<Array<{ statement: string, generic: bigint, custom: bigint }>>`
    SELECT statement, generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements`
  for (const [name, , pattern] of operations) {
    // The most executed text of each.
    const [statement] = prepared.filter(p => pattern.test(p.statement))
      .sort((a, b) => Number(b.generic + b.custom) - Number(a.generic + a.custom))
    if (statement === undefined) {
      t.fail(`${name}: no prepared statement`)
      continue
    }
    t.ok(Number(statement.custom) <= 5, `${name}: at most PostgreSQL's five trial custom plans (${statement.custom})`)
    t.ok(Number(statement.generic) >= 1, `${name}: then a generic plan (${statement.generic} executions on it)`)
    t.comment(`plan cache figures: ${name}: ${statement.custom} custom, ${statement.generic} generic plans of ${Number(statement.custom) + Number(statement.generic)} executions`)
  }
})

t.test('a repeated analytics question, answered from the answer kept, runs its one statement on a generic plan', { skip }, async t => {
  // Answers kept (the default): each repeat reads only the version and whether the zone's rules are stored.
  const { app, prisma } = await buildTestApp(t, { env: { DB_POOL_MAX: '1', SUMMARY_FOLD_INTERVAL_MS: '0', SYNC_PRUNE_INTERVAL_MS: '0' } })
  const pro = await createTenant(prisma, { plan: 'pro' })
  const job = await createJob(prisma, pro, { questions: 3 })
  await createScreens(prisma, job.id, Array.from({ length: 40 }, (_, i) => ({ status: 'completed' as const, score: i, completedAt: new Date(Date.UTC(2026, 0, 1 + i)) })))
  const url = `/api/jobs/${job.id}/analytics?tz=Europe/Berlin`
  const first = await app.inject({ url, headers: pro.auth })
  t.equal(first.statusCode, 200)
  for (let i = 0; i < 12; i++) {
    const res = await app.inject({ url, headers: pro.auth })
    t.equal(res.statusCode, 200, `repeat #${i + 1}`)
    t.equal(res.body, first.body, 'the same answer')
  }
  const prepared = await app.database.prisma.$queryRaw<Array<{ statement: string, generic: bigint, custom: bigint }>>`
    SELECT statement, generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements`
  const [statement] = prepared.filter(p => /^\s*SELECT \(SELECT coalesce\(sum\(c\.changes\)[\s\S]*EXISTS \(SELECT FROM zone_rules/.test(p.statement))
  if (statement === undefined) { t.fail('the version and rules statement: not prepared'); return }
  t.equal(Number(statement.custom + statement.generic), 12, 'run once per repeat')
  t.ok(Number(statement.custom) <= 5, `at most PostgreSQL's five trial custom plans (${statement.custom})`)
  t.ok(Number(statement.generic) >= 1, `then a generic plan (${statement.generic} executions on it)`)
  t.comment(`plan cache figures: kept answer's version read: ${statement.custom} custom, ${statement.generic} generic plans`)
})
