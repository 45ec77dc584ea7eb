// Run by test/webhooks/fan-out.test.ts (and bench/webhook-fan-out.ts) in a process of its own,
// under the production V8 flags (package.json's start:prod): a delivering instance (the
// dispatcher every FANOUT_INTERVAL_MS and the sender, as src/webhooks/webhooks-plugin.ts runs them) on
// a test database holding FANOUT_BIG endpoints in one organization (past the API's cap, as
// rows made before it or under a raised WEBHOOK_ENDPOINTS_MAX) and FANOUT_SMALL organizations
// of 16, all sending to FANOUT_RECEIVER/<organization's index>; then a burst of changes:
// FANOUT_BIG_CHANGES jobs of the big organization and one job of each small one. Prints a JSON
// line per run: its events, the heap, the time since the burst; runs until killed.
import { randomUUID } from 'node:crypto'
import { loadConfig } from '../../src/config.js'
import { SYNC_POINT } from '../../src/changes/point.js'
import { historyId } from '../../src/changes/history.js'
import { bounded, parseSnapshot } from '../../src/changes/snapshot.js'
import { dispatchChanges } from '../../src/webhooks/dispatch.js'
import { storedPosition } from '../../src/webhooks/position.js'
import { SecretBox } from '../../src/webhooks/secrets.js'
import { Webhooks } from '../../src/webhooks/webhooks.js'
import { webhookSettings } from '../../src/webhooks/webhook-settings.js'
import { newSigningSecret } from '../../src/webhooks/signing.js'
import { apiDatabase, localLookup, TEST_WEBHOOK_SECRET_KEY } from './app.js'
import { createTestDatabase } from './database.js'
import { createJob, createTenant, type Tenant } from './fixtures.js'
import { sleep } from './sleep.js'

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback)
const receiver = process.env.FANOUT_RECEIVER!
const [big, small, bigChanges, interval] = [env('FANOUT_BIG', 14_000), env('FANOUT_SMALL', 63), env('FANOUT_BIG_CHANGES', 100), env('FANOUT_INTERVAL_MS', 200)]
const print = (record: Record<string, unknown>): void => { process.stdout.write(JSON.stringify(record) + '\n') }

const db = await createTestDatabase()
const config = loadConfig({ LOG_LEVEL: 'silent', WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY, WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' })
const box = new SecretBox(Buffer.from(TEST_WEBHOOK_SECRET_KEY, 'base64'))
const [point] = await db.prisma.$queryRaw<Array<{ snapshot: string, generation: number, history: string }>>(SYNC_POINT(true))
const position = JSON.stringify(storedPosition({ since: bounded(parseSnapshot(point!.snapshot)!), generation: point!.generation, history: historyId(point!.history), analytics: true, jobs: true, at: Date.now() }))

/** `count` endpoints of `tenant`, made as the API makes them (a sealed secret each), in one statement. */
async function endpoints (tenant: Tenant, index: number, count: number): Promise<void> {
  const ids = Array.from({ length: count }, () => randomUUID())
  const secrets = ids.map(id => Buffer.from(box.seal(id, newSigningSecret())).toString('base64'))
  await db.prisma.$executeRaw`
    INSERT INTO webhook_endpoints (id, organization_id, api_key_id, url, events, secret, position)
    SELECT e.id, ${tenant.organizationId}::uuid, ${tenant.apiKeyId}::uuid, ${`${receiver}/${index}`}, ARRAY['job.updated', 'job.deleted'], decode(e.secret, 'base64'), ${position}::jsonb
    FROM unnest(${ids}::uuid[], ${secrets}::text[]) AS e(id, secret)`
}

const tenants: Tenant[] = []
for (let i = 0; i <= small; i++) {
  const tenant = await createTenant(db.prisma)
  tenants.push(tenant)
  await endpoints(tenant, i, i === 0 ? big : 16)
}
const jobs = [
  ...await Promise.all(Array.from({ length: bigChanges }, async () => await createJob(db.prisma, tenants[0]!))),
  ...await Promise.all(tenants.slice(1).map(async tenant => await createJob(db.prisma, tenant))),
]
// Made after the endpoints' position, so their creation is told too; the burst is then an
// update of each, a transaction each, once the instance runs.
const database = apiDatabase(db, config)
const webhooks = new Webhooks(database, webhookSettings(config), { warn: () => {}, info: () => {} } as never, localLookup)
await webhooks.start()
const started = Date.now()
for (const job of jobs) await db.prisma.$executeRaw`UPDATE jobs SET title = 'burst' WHERE id = ${job.id}::uuid`
print({ ready: true, endpoints: big + 16 * small, changes: jobs.length, setupMs: Date.now() - started })

let run = 0
for (;;) {
  const before = Date.now()
  // As src/webhooks/webhooks-plugin.ts runs it: with what the sender has room for; a failed run logged, not fatal.
  const room = (webhooks as { room?: () => unknown }).room?.()
  const result = await dispatchChanges(database.prisma, { leaseMs: webhooks.leaseMs, ...(room !== undefined ? { budget: room } : {}) } as never).catch((error: unknown) => { print({ failedRun: String(error) }); return undefined })
  for (const batch of result?.batches ?? []) webhooks.send(batch)
  const memory = process.memoryUsage()
  print({ run: ++run, events: result?.events ?? 0, endpoints: result?.endpoints ?? 0, failed: result?.failed ?? 0, ms: Date.now() - before, sinceBurstMs: Date.now() - started, heapUsedMb: Math.round(memory.heapUsed / 1048576), rssMb: Math.round(memory.rss / 1048576) })
  await sleep(interval)
}
