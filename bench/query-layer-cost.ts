// What each layer between a repository function and PostgreSQL costs in Node (issue 21: the
// service's Node CPU per small get job is above the hand-written baseline's): get job's one
// statement, sent (a) through Prisma's client ($queryRaw, as the service did until 8394fdd),
// (b) as the service does now (Database.read: the driver adapter, rows typed by rows.ts),
// (c) through Prisma's driver adapter alone (@prisma/adapter-pg's queryRaw, the same pool
// and named statement), (d) through node-postgres with the same named statement, as the
// baseline does. One connection, one query at a time, rounds interleaved; Node CPU per query
// (process.cpuUsage) and wall time, medians of the rounds. Run on a server:
//   TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npx tsx bench/query-layer-cost.ts
import pg from 'pg'
import { openServerDatabase } from '../src/db/server-database.js'
import { statementName } from '../src/db/statement-names.js'
import { clientReader } from '../src/db/sql-reader.js'
import { findJob } from '../src/jobs/job/find-job.js'
import { createTestDatabase } from '../test/helpers/database.js'
import { createJob, createScreens, createTenant } from '../test/helpers/fixtures.js'

const QUERIES = Number(process.env.QUERIES ?? 2000)
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const settings = { DB_POOL_MAX: 1, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 5000, DB_STATEMENT_TIMEOUT_MS: 5000 }

const test = await createTestDatabase()
if (test.apiUrl === undefined) throw new Error('set TEST_DATABASE_URL to a PostgreSQL server')
const tenant = await createTenant(test.prisma)
const job = await createJob(test.prisma, tenant, { questions: 4 })
await createScreens(test.prisma, job.id, Array.from({ length: 200 }, (_, i) => ({ status: 'completed' as const, score: i % 100, completedAt: new Date(Date.UTC(2026, 0, 1 + i % 60)) })))

// The statement findJob sends, as Prisma's query event reports it.
const logged = openServerDatabase(test.apiUrl, settings, { logQueries: true })
let sql = ''
;(logged.prisma as unknown as { $on: (e: 'query', cb: (e: { query: string }) => void) => void }).$on('query', e => { sql = e.query })
await findJob(clientReader(logged.prisma), tenant.organizationId, job.id)
await logged.close()

const db = openServerDatabase(test.apiUrl, settings)
const adapter = await db.adapterFactory.connect()
const pool = new pg.Pool({ connectionString: test.apiUrl, max: 1 })
const args = [job.id, tenant.organizationId]
const argTypes = args.map(() => ({ scalarType: 'string', arity: 'scalar' })) as Parameters<typeof adapter.queryRaw>[0]['argTypes']
const layers: Array<[string, () => Promise<unknown>]> = [
  ['Prisma client ($queryRaw), the former path', async () => await findJob(clientReader(db.prisma), tenant.organizationId, job.id)],
  ['the service\'s path (Database.read: the driver adapter, rows typed by rows.ts)', async () => await db.read(async reader => await findJob(reader, tenant.organizationId, job.id))],
  ['Prisma driver adapter (queryRaw)', async () => await adapter.queryRaw({ sql, args, argTypes })],
  ['node-postgres, named statement', async () => await pool.query({ name: statementName(sql), text: sql, values: args })],
]

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const figures = new Map<string, { cpu: number[], wall: number[] }>(layers.map(([name]) => [name, { cpu: [], wall: [] }]))
try {
  for (const [, run] of layers) for (let i = 0; i < 300; i++) await run()
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of layers) {
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      for (let i = 0; i < QUERIES; i++) await run()
      const cpu = process.cpuUsage(cpu0)
      figures.get(name)!.cpu.push((cpu.user + cpu.system) / QUERIES)
      figures.get(name)!.wall.push((performance.now() - t0) * 1000 / QUERIES)
    }
  }
  console.log(`node ${process.version}; ${ROUNDS} rounds of ${QUERIES} queries per layer, medians`)
  console.log('| layer | Node CPU µs/query | wall µs/query |\n|---|---:|---:|')
  for (const [name, { cpu, wall }] of figures) console.log(`| ${name} | ${median(cpu).toFixed(0)} | ${median(wall).toFixed(0)} |`)
} finally {
  await pool.end()
  await db.close()
  await test.close()
}
