import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import t from 'tap'
import { TEST_WEBHOOK_SECRET_KEY } from '../helpers/app.js'
import { createTestDatabase, serverUrl } from '../helpers/database.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { startServer } from '../helpers/server-process.js'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js'
import { within } from '../helpers/until.js'

// At least once through crashes (issue 41): an instance killed with -9 while an attempt is in
// flight (the receiver holds the request open), and the attempt made again, with the same
// webhook-id, within a minute of the death: by another instance sharing the PostgreSQL server,
// and on the embedded database by the instance restarted on the same data. A first attempt is
// a dispatcher's batch: its endpoint's position stays, and once the dead instance's lease runs
// out (at a restart, on the embedded database) a run sends it again (src/webhooks/dispatch.ts).

const ENV = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', WEBHOOK_RETRY_DELAYS: '1s,1s,1s', WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY, CURSOR_SECRET: 'c'.repeat(40) }

/** A receiver that holds the first delivery of each event open (until released) and answers the next ones. */
async function holdingReceiver (t: { teardown: (fn: () => unknown) => void }): Promise<Receiver & { held: () => boolean }> {
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  let held = false
  receiver.answer = ({ count }) => {
    if (count === 1) { held = true; return { status: 204, delayMs: 600_000 } }
    return { status: 204 }
  }
  return Object.assign(receiver, { held: () => held })
}

/** The server as production starts it (src/server.ts), on a PostgreSQL server: ready when it listens. */
async function serverInstance (t: { teardown: (fn: () => unknown) => void }, databaseUrl: string): Promise<{ baseUrl: string, kill: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...process.env, ...ENV, DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr!.on('data', (c: Buffer) => { out += c.toString() })
  const exited = new Promise<void>(resolve => child.once('exit', () => { resolve() }))
  t.teardown(async () => { if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited } })
  await within(() => /Server listening at/.test(out), 60_000, 100)
  const baseUrl = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1]
  if (baseUrl === undefined) throw new Error(`the server did not start:\n${out}`)
  return { baseUrl, kill: async () => { child.kill('SIGKILL'); await exited } }
}

async function createEndpoint (baseUrl: string, key: string, url: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/webhook_endpoints`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ url }) })
  if (res.status !== 201) throw new Error(`${res.status} ${await res.text()}`)
  return ((await res.json()) as { secret: string }).secret
}

t.test('on a PostgreSQL server: an instance killed mid-attempt; another makes the attempt again, same webhook-id, within a minute', { skip: serverUrl === undefined ? 'needs TEST_DATABASE_URL: two instances share a server' : false }, async t => {
  const db = await createTestDatabase()
  t.teardown(db.close)
  const tenant = await createTenant(db.prisma)
  const receiver = await holdingReceiver(t)
  const first = await serverInstance(t, db.apiUrl!)
  receiver.secrets.push(await createEndpoint(first.baseUrl, tenant.key, receiver.url))
  const job = await createJob(db.prisma, tenant)
  await within(() => receiver.held(), 15_000, 50)
  t.ok(receiver.held(), 'the first instance made the attempt, and the receiver holds it open')
  const id = receiver.received.find(r => r.jobId === job.id)!.id
  await first.kill()
  t.equal(receiver.received.filter(x => x.id === id).length, 1, 'one attempt made when it died: the next is made after the death')
  const died = Date.now()
  await serverInstance(t, db.apiUrl!)
  t.ok(await receiver.until(r => r.filter(x => x.id === id).length >= 2, 60_000), 'made again after the death')
  const again = receiver.received.filter(x => x.id === id)[1]!
  const after = (again.at - died) / 1000
  t.ok(after < 60, `within a minute of the kill: ${after.toFixed(1)} s`)
  t.ok(again.verified, 'signed, and verified')
  t.comment(`figures: webhooks: attempt made again ${after.toFixed(1)} s after kill -9 (another instance)`)
})

t.test('embedded: the instance killed mid-attempt and restarted on its data makes the attempt again, same webhook-id, within a minute', async t => {
  const dataDir = mkdtempSync(join(tmpdir(), 'screening-crash-'))
  t.teardown(() => { rmSync(dataDir, { recursive: true, force: true }) })
  const receiver = await holdingReceiver(t)
  const keep = { dataDir }
  let server = await startServer(t, ENV, keep)
  receiver.secrets.push(await createEndpoint(server.baseUrl, server.keys.pro, receiver.url))
  await server.stop()
  // A change while it is down (nothing else writes to its database), found on its restart.
  const db = new PGlite(dataDir)
  await db.query('UPDATE jobs SET title = title || \' (changed)\' WHERE id = $1', [server.sampleJobId])
  await db.close()
  server = await startServer(t, ENV, keep)
  await within(() => receiver.held(), 15_000, 50)
  t.ok(receiver.held(), 'the change\'s delivery is in flight, held open by the receiver')
  const id = receiver.received.find(r => r.jobId === server.sampleJobId)!.id
  await server.stop('SIGKILL')
  t.equal(receiver.received.filter(x => x.id === id).length, 1, 'one attempt made when it died: the next is made after the death')
  const died = Date.now()
  await startServer(t, ENV, keep)
  t.ok(await receiver.until(r => r.filter(x => x.id === id).length >= 2, 60_000), 'made again by the restarted instance')
  const after = (receiver.received.filter(x => x.id === id)[1]!.at - died) / 1000
  t.ok(after < 60, `within a minute of the kill: ${after.toFixed(1)} s`)
  t.comment(`figures: webhooks: attempt made again ${after.toFixed(1)} s after kill -9 (the instance restarted on its embedded data)`)
})
