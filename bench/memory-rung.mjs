// One rung of bench/memory-parts.ts, in a process of its own, on the production build (plain
// node, no loader): everything up to rung N loaded and used once, then, after two forced
// collections, the process's resident memory and V8's figures, as JSON on stdout.
import { readFileSync } from 'node:fs'
import v8 from 'node:v8'

const dist = new URL('../dist/', import.meta.url).href
const url = process.env.DATABASE_URL
const keep = []
export const RUNGS = [
  ['node itself', async () => {}],
  ['Fastify (an app with one route, ready)', async () => { const { default: Fastify } = await import('fastify'); const app = Fastify(); app.get('/', async () => ({ ok: true })); await app.ready(); keep.push(app) }],
  ['pg (a pool, one query)', async () => { const { default: pg } = await import('pg'); const pool = new pg.Pool({ connectionString: url }); await pool.query('SELECT 1'); keep.push(pool) }],
  ['Prisma\'s client and driver adapter (one model query: its query compiler)', async () => {
    const { PrismaClient } = await import(dist + 'generated/prisma/client.js')
    const { PrismaPg } = await import('@prisma/adapter-pg')
    const client = new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) })
    await client.organization.findFirst()
    keep.push(client)
  }],
  ['PGlite and its adapter, the schema engine (modules only: the embedded database and migrations)', async () => { await import('@electric-sql/pglite'); await import('pglite-prisma-adapter'); await import(dist + 'db/schema-engine.js') }],
  ['the zone rules (built from moment-timezone\'s data)', async () => { const { zoneRules } = await import(dist + 'zones/rules.js'); keep.push(zoneRules()) }],
  ['pg-boss (module)', async () => { await import('pg-boss') }],
  ['the whole app (buildApp on the server database, ready: routes, schemas, OpenAPI, metrics, caches)', async () => {
    const { loadConfig } = await import(dist + 'config.js')
    const { openDatabase } = await import(dist + 'db/open-database.js')
    const { buildApp } = await import(dist + 'app.js')
    const config = loadConfig({ DATABASE_URL: url, CURSOR_SECRET: 'x'.repeat(40), LOG_LEVEL: 'warn', METRICS_TOKEN: 'm'.repeat(20), WEBHOOK_SECRET_KEY: Buffer.alloc(32, 1).toString('base64') })
    const app = await buildApp({ config, database: await openDatabase(config) })
    await app.ready()
    keep.push(app)
  }],
]

const rung = Number(process.argv[2])
for (let i = 0; i <= rung; i++) await RUNGS[i][1]()
await new Promise(resolve => setTimeout(resolve, 500))
globalThis.gc(); globalThis.gc()
await new Promise(resolve => setTimeout(resolve, 500))
const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024
const heap = v8.getHeapStatistics()
const mb = n => n / 2 ** 20
process.stdout.write(JSON.stringify({ rung, name: RUNGS[rung][0], rss, heapUsed: mb(heap.used_heap_size), heapTotal: mb(heap.total_heap_size), external: mb(heap.external_memory) }) + '\n')
process.exit(0)
