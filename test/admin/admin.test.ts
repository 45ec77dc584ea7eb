import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import t from 'tap'
import { createEmbeddedDataDir, createTestDatabase, serverUrl } from '../helpers/database.js'

// The admin command line, run as an operator would, each test on a migrated database of its
// own: in the server suite, one on the server (as its owner: the operator's role); else an
// embedded one (DATA_DIR), written from the tests' template rather than made by the first
// command, which cost that command its initdb and every migration (about 10 s). A command
// is a process of its own, mostly its start-up (tsx's loader, Prisma's engine) on about one
// core: two tests run at a time (55 s to 48 s on the server, 2 cores).
t.jobs = 2
const scratch = mkdtempSync(join(tmpdir(), 'screening-admin-'))
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))

interface Result { status: number | null, stdout: string, stderr: string }

async function run (target: Record<string, string>, args: string[]): Promise<Result> {
  const { DATABASE_URL: _, ...env } = process.env
  return await new Promise(resolve => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], { env: { ...env, ...target, LOG_LEVEL: 'silent' }, encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr })
    })
  })
}

type Admin = ((...args: string[]) => Promise<Result>) & { target: Record<string, string> }

/** The command on a new migrated database (see above). */
async function adminOn (t: { teardown: (fn: () => unknown) => void }): Promise<Admin> {
  let target: Record<string, string>
  if (serverUrl !== undefined) {
    const db = await createTestDatabase()
    t.teardown(db.close)
    target = { DATABASE_URL: db.url! }
  } else {
    const dataDir = mkdtempSync(join(scratch, 'embedded-'))
    await createEmbeddedDataDir(dataDir)
    target = { DATA_DIR: dataDir }
  }
  return Object.assign(async (...args: string[]) => await run(target, args), { target })
}

/** SQL on a command's database, between commands (the embedded one is opened for it, then closed). */
async function onDatabase (admin: Admin, sql: string): Promise<unknown[]> {
  if (admin.target.DATABASE_URL !== undefined) {
    const client = new pg.Client({ connectionString: admin.target.DATABASE_URL })
    await client.connect()
    try { return ([await client.query(sql)].flat().at(-1)!).rows } finally { await client.end() }
  }
  const db = new PGlite(admin.target.DATA_DIR)
  try { return (await db.exec(sql)).at(-1)!.rows } finally { await db.close() }
}

// Where commands refused for their arguments are pointed: an embedded database that does not
// exist, which opening would create.
const untouched = join(scratch, 'never-opened')

/**
 * Commands refused for their arguments (exit 2), which stop before opening a database: so
 * they are run a few at a time, one process each; results in the order given.
 */
async function refused (t: { notOk: (value: unknown, message: string) => unknown }, list: string[][]): Promise<Result[]> {
  const results: Result[] = []
  let next = 0
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), list.length) }, async () => {
    for (let i = next++; i < list.length; i = next++) results[i] = await run({ DATA_DIR: untouched }, list[i]!)
  }))
  t.notOk(existsSync(untouched), 'none of them opened a database')
  return results
}

t.test('bad arguments print usage and exit non-zero', async t => {
  const list = [[], ['frobnicate'], ['create-org'], ['create-org', '--name', 'X', '--plan', 'gold'], ['create-user', '--org', 'not-a-uuid', '--email', 'a@b', '--name', 'n'], ['create-key', '--bogus', 'x'], ['revoke-key']]
  for (const [i, res] of (await refused(t, list)).entries()) {
    t.equal(res.status, 2, list[i]!.join(' ') || '(nothing)')
    t.match(res.stderr, /usage: npm run admin/)
  }
})

t.test('bootstrap an organization, a user and a key; change the plan; revoke the key', async t => {
  const admin = await adminOn(t)
  const org = await admin('create-org', '--name', 'Initech', '--plan', 'pro', '--status', 'trialing', '--period-end', '2030-01-01T00:00:00.000Z')
  t.equal(org.status, 0, org.stderr)
  const orgId = JSON.parse(org.stdout).id as string
  const user = await admin('create-user', '--org', orgId, '--email', 'pat@initech.test', '--name', 'Pat')
  t.equal(user.status, 0, user.stderr)
  const key = await admin('create-key', '--user', JSON.parse(user.stdout).id, '--name', 'ci')
  t.equal(key.status, 0, key.stderr)
  const created = JSON.parse(key.stdout)
  t.match(created.key, /^srk_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{43}$/, 'the key is printed once')
  const plan = await admin('set-plan', '--org', orgId, '--plan', 'free', '--period-end', 'none')
  t.equal(plan.status, 0, plan.stderr)
  t.match(JSON.parse(plan.stdout), { plan: 'free', currentPeriodEnd: null, subscriptionStatus: 'trialing' })
  t.equal((await admin('revoke-key', '--prefix', created.prefix)).status, 0)
  const again = await admin('revoke-key', '--prefix', created.prefix)
  t.equal(again.status, 1, 'revoking twice fails: no active key matched')
  t.match(again.stderr, /No active key matched/)
})

t.test('scoped keys: create-key --scopes, set-scopes; unknown scopes refused with exit 2 (issue 24)', async t => {
  const admin = await adminOn(t)
  const org = await admin('create-org', '--name', 'Scoped Co', '--plan', 'pro')
  t.equal(org.status, 0, org.stderr)
  const user = await admin('create-user', '--org', JSON.parse(org.stdout).id, '--email', 'sam@scoped.test', '--name', 'Sam')
  t.equal(user.status, 0, user.stderr)
  const userId = JSON.parse(user.stdout).id as string
  const unrestricted = await admin('create-key', '--user', userId, '--name', 'default')
  t.equal(unrestricted.status, 0, unrestricted.stderr)
  t.same(JSON.parse(unrestricted.stdout).scopes, ['*'], 'without --scopes: every scope, now and later')
  const restricted = await admin('create-key', '--user', userId, '--name', 'partner', '--scopes', 'analytics:read, jobs:read,jobs:read')
  t.equal(restricted.status, 0, restricted.stderr)
  const created = JSON.parse(restricted.stdout)
  t.same(created.scopes, ['jobs:read', 'analytics:read'], 'listed once each, in the known order')
  const cases: Array<[string[], RegExp]> = [
    [['create-key', '--user', userId, '--scopes', 'jobs:write'], /unknown scope "jobs:write": known scopes are jobs:read, analytics:read, webhooks:read, webhooks:write \(or all\)/],
    [['create-key', '--user', userId, '--scopes', 'jobs:read,admin'], /unknown scope "admin"/],
    [['create-key', '--user', userId, '--scopes', ''], /--scopes is required/],
    [['create-key', '--user', userId, '--scopes', ','], /at least one scope is needed/],
    [['set-scopes', '--prefix', created.prefix, '--scopes', 'all,jobs:read'], /`all` stands alone/],
    [['set-scopes', '--prefix', created.prefix, '--scopes', 'Jobs:Read'], /unknown scope "Jobs:Read"/],
    [['set-scopes', '--prefix', created.prefix], /--scopes is required/],
    [['set-scopes', '--scopes', 'jobs:read'], /give exactly one of --prefix and --id/],
  ]
  for (const [i, res] of (await refused(t, cases.map(([args]) => args))).entries()) {
    const [args, message] = cases[i]!
    t.equal(res.status, 2, `${args.join(' ')}: exit 2`)
    t.match(res.stderr, message, `${args.join(' ')}: says why`)
    t.match(res.stderr, /usage: npm run admin/)
  }
  const narrowed = await admin('set-scopes', '--prefix', created.prefix, '--scopes', 'jobs:read')
  t.equal(narrowed.status, 0, narrowed.stderr)
  t.match(JSON.parse(narrowed.stdout), { prefix: created.prefix, name: 'partner', scopes: ['jobs:read'] })
  const widened = await admin('set-scopes', '--id', created.id, '--scopes', 'all')
  t.equal(widened.status, 0, widened.stderr)
  t.same(JSON.parse(widened.stdout).scopes, ['*'], '`all`: every scope again')
  t.equal((await admin('revoke-key', '--prefix', created.prefix)).status, 0)
  const revoked = await admin('set-scopes', '--prefix', created.prefix, '--scopes', 'jobs:read')
  t.equal(revoked.status, 1, 'a revoked key\'s scopes are not changed')
  t.match(revoked.stderr, /No active key matched/)
  t.equal((await admin('set-scopes', '--prefix', 'srk_nosuchky', '--scopes', 'jobs:read')).status, 1, 'nor a missing one')
})

t.test('expire-sync-tokens: a new generation of the change log each time (what it does to tokens: test/jobs/sync/sync.test.ts)', async t => {
  const admin = await adminOn(t)
  const first = await admin('expire-sync-tokens')
  t.equal(first.status, 0, first.stderr)
  const second = await admin('expire-sync-tokens')
  t.equal(second.status, 0, second.stderr)
  const [a, b] = [JSON.parse(first.stdout).generation, JSON.parse(second.stdout).generation]
  t.ok(Number.isSafeInteger(a) && Number.isSafeInteger(b), `generations ${a}, ${b}`)
  t.not(a, b, 'never the same twice in a row')
})

t.test('webhook endpoints (issue 41): list, disable, enable, recover what was given up', async t => {
  const admin = await adminOn(t)
  const created = JSON.parse((await admin('create-org', '--name', 'Hooks', '--plan', 'pro')).stdout) as { id: string }
  // An endpoint and an event given up on, as the service would have left them.
  const endpointId = '0b5cd0a4-4c9d-4e8a-9a6e-6d1f2b3c4d5e'
  const seed = `INSERT INTO webhook_endpoints (id, organization_id, url, events, secret) VALUES ('${endpointId}', '${created.id}', 'https://partner.example/hooks', ARRAY['job.updated'], '\\x00');
    INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, job_id, event_at, attempt, outcome, status_code, attempted_at)
    VALUES ('${endpointId}', 'msg_given_up', 'job.updated', gen_random_uuid(), now(), 8, 'failed', 500, now())`
  await onDatabase(admin, seed)
  const listed = JSON.parse((await admin('list-endpoints', '--org', created.id)).stdout) as Array<{ id: string, status: string }>
  t.same(listed.map(e => [e.id, e.status]), [[endpointId, 'enabled']])
  t.match(JSON.parse((await admin('disable-endpoint', '--id', endpointId)).stdout), { status: 'disabled', disabled_reason: 'operator' })
  t.match(JSON.parse((await admin('list-endpoints')).stdout), [{ id: endpointId, status: 'disabled', disabledReason: 'operator' }])
  t.match(JSON.parse((await admin('enable-endpoint', '--id', endpointId)).stdout), { status: 'enabled' })
  const recovered = await admin('recover-endpoint', '--id', endpointId, '--since', new Date(Date.now() - 3_600_000).toISOString())
  t.equal(recovered.status, 0, recovered.stderr)
  t.same(JSON.parse(recovered.stdout), { id: endpointId, scheduled: 1, skipped: 0, more: false })
  const queued = await onDatabase(admin, 'SELECT data->\'events\'->0->>\'id\' AS id, (data->\'events\'->0->>\'attempt\')::int AS attempt FROM pgboss.job WHERE name = \'webhook-delivery\'')
  t.same(queued, [{ id: 'msg_given_up', attempt: 9 }], 'the event is queued again, its next attempt, with its webhook-id')
  const missing = await admin('disable-endpoint', '--id', '11111111-1111-4111-8111-111111111111')
  t.equal(missing.status, 1)
  t.match(missing.stderr, /No endpoint matched/)
})
