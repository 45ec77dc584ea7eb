import { readFileSync, statSync } from 'node:fs'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { productionDatabase } from '../helpers/database.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'
import { replicationTools, startCluster } from '../helpers/replication.js'
import { sleep } from '../helpers/sleep.js'
import { until } from '../helpers/until.js'

// Statements per call of the analytics operations as the server logs them (log_statement =
// all, in a cluster of the test's own, the API's connections told apart by application_name):
// what PostgreSQL received, not what the code or the client library says it sent. Background
// work (the fold, pruning, the webhooks' checks, the change listener's probes) is off or left
// out by its text, and every statement counted is printed.

const tools = replicationTools()
const skip = 'missing' in tools ? tools.missing : false

// Not a request's: the change listener's probe, the webhooks' start check.
const BACKGROUND = /pg_notify|FROM "public"\."webhook_endpoints"|webhook_endpoints.*count/i

t.test('each analytics call is at most 2 statements, whatever the number of jobs', { skip }, async t => {
  const cluster = await startCluster((tools as { bindir: string }).bindir, { settings: ["log_statement = 'all'", "log_line_prefix = '%a|'"] })
  t.teardown(cluster.close)
  const owner = await productionDatabase(t, cluster.url)
  const apiUrl = cluster.url('screening').replace('postgres@', 'screening_api@')
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: apiUrl, SUMMARY_FOLD_INTERVAL_MS: '0', SYNC_PRUNE_INTERVAL_MS: '0', WEBHOOK_WORKER: 'off', RATE_LIMIT_MAX: '100000' })
  const app = await buildApp({ config, database: openServerDatabase(apiUrl, config) })
  t.teardown(async () => { await app.close() })
  await app.ready()
  // The start's storing of the zone rules (keep_zone_rules, then load_zone_rules' 3 MB) can
  // time out on a loaded machine, and the first analytics request would store them, counted.
  await until('the zone rules stored', async () => await app.zoneRules.ready().then(() => true, () => false), 60_000)

  const pro = await createTenant(owner.prisma, { plan: 'pro' })
  const jobs: string[] = []
  for (let i = 0; i < 50; i++) {
    const job = await createJob(owner.prisma, pro)
    await createScreens(owner.prisma, job.id, Array.from({ length: 4 + (i % 5) }, (_, k) => ({ status: 'completed' as const, score: 10 * k, completedAt: new Date(Date.UTC(2026, 0, 1 + i + k, 10)) })))
    jobs.push(job.id)
  }
  const logged = async (url: string, headers: Record<string, string> = pro.auth): Promise<{ status: number, etag: string, statements: string[] }> => {
    const from = statSync(cluster.log).size
    const res = await app.inject({ url, headers })
    await sleep(300) // the log written
    // Bytes, not characters: the log holds statements' non-ASCII text. An entry's statement
    // continues on the lines after it (a tab first).
    const entries = readFileSync(cluster.log).subarray(from).toString('utf8').split(/\n(?!\t)/)
    const statements = entries.filter(entry => entry.startsWith('screening-read-api|') && /^[^|]*\|LOG: {2}(statement|execute [^:]*):/.test(entry))
      .map(entry => entry.replace(/^[^|]*\|LOG: {2}(statement|execute [^:]*): */, '').replace(/\s+/g, ' ').trim()).filter(text => !BACKGROUND.test(text))
    return { status: res.statusCode, etag: res.headers.etag as string, statements }
  }
  t.equal((await logged('/api/me')).status, 200, 'the caller looked up once (and cached)')
  const batch = `/api/analytics/jobs?${jobs.map(id => `job_id=${id}`).join('&')}&tz=Europe/Berlin&from=2026-01-01&to=2026-03-31`
  const rollup = '/api/analytics/organization?tz=Europe/Berlin&job_status=active&from=2026-01-01&to=2026-03-31'
  const figures: string[] = []
  for (const [name, url] of [['one job', `/api/jobs/${jobs[0]}/analytics?tz=Europe/Berlin`], ['one job beside its previous period', `/api/jobs/${jobs[0]}/analytics?tz=Europe/Berlin&from=2026-01-01&to=2026-03-31&compare=previous_period`], ['a batch of 50 jobs', batch], ['the batch beside its previous period', `${batch}&compare=previous_period`], ['the rollup of 50 jobs', rollup], ['the rollup beside its previous period', `${rollup}&compare=previous_period`], ['the rollup of the whole organization (its version in one row)', '/api/analytics/organization?tz=Europe/Berlin']] as const) {
    const answered = await logged(url)
    t.equal(answered.status, 200, name)
    t.equal(answered.statements.length, 1, `${name}: one statement:\n${answered.statements.map(s => s.slice(0, 120)).join('\n')}`)
    const current = await logged(url, { ...pro.auth, 'if-none-match': answered.etag })
    t.equal(current.status, 304, `${name}: 304`)
    t.equal(current.statements.length, 1, `${name} with a current ETag: one statement`)
    const stale = await logged(url, { ...pro.auth, 'if-none-match': '"stale"' })
    t.equal(stale.status, 200)
    t.ok(stale.statements.length <= 2, `${name} with a stale ETag: at most 2 (${stale.statements.length})`)
    figures.push(`${name} ${answered.statements.length}, 304 ${current.statements.length}, stale ETag ${stale.statements.length}`)
  }
  t.comment(`statements per call from log_statement: ${figures.join('; ')}`)
})
