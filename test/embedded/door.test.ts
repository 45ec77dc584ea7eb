import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import t from 'tap'
import { socketPath } from '../../src/db/data-dir-claim.js'
import { openEmbeddedDatabase } from '../../src/db/embedded-database.js'
import { DOOR_CLIENTS_MAX } from '../../src/db/door.js'
import { DOOR_IDLE_MS } from '../../src/db/door-session.js'
import { createEmbeddedDataDir } from '../helpers/database.js'
import { until } from '../helpers/until.js'
import { sleep } from '../helpers/sleep.js'

// pg-protocol is CommonJS, without named exports for ESM.
const { serialize } = createRequire(import.meta.url)('pg-protocol') as typeof import('pg-protocol')

// The door (src/db/door.ts): the embedded database served on its data directory's socket,
// beside the owner's own statements, which never run inside a client's exchange (nor the
// reverse), and never see what a client set or left behind.

const scratch = mkdtempSync(join(tmpdir(), 'screening-door-'))
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))
const dataDir = join(scratch, 'data')
await createEmbeddedDataDir(dataDir)
const db = await openEmbeddedDatabase(dataDir)
t.teardown(db.close)

const client = async (): Promise<pg.Client> => {
  const c = new pg.Client({ host: dataDir, user: 'postgres', database: 'postgres' })
  c.on('error', () => {}) // each test reads the errors it expects
  await c.connect()
  return c
}
const insert = 'INSERT INTO organizations (name) VALUES ($1)'
const count = async (name: string): Promise<number> => await db.prisma.organization.count({ where: { name } })

/** A promise and whether it has settled yet. */
function watch<T> (promise: Promise<T>): { promise: Promise<T>, settled: () => boolean } {
  let settled = false
  void promise.finally(() => { settled = true }).catch(() => {})
  return { promise, settled: () => settled }
}

/** A raw client of the socket: started (startup answered), then whatever the test writes. */
async function rawClient (startup: Record<string, string> = { user: 'postgres', database: 'postgres' }): Promise<{ socket: Socket, received: () => Buffer }> {
  const socket = connect(socketPath(dataDir))
  let received = Buffer.alloc(0)
  socket.on('data', (c: Buffer) => { received = Buffer.concat([received, c]) })
  socket.on('error', () => {})
  await new Promise(resolve => socket.once('connect', resolve))
  socket.write(serialize.startup(startup))
  while (!received.includes(Buffer.from([0x5a, 0, 0, 0, 5]))) await sleep(10)
  return { socket, received: () => received }
}

t.test('psql through the socket: the simple protocol, a transaction', async t => {
  const { stdout } = await promisify(execFile)('psql', ['-h', dataDir, '-U', 'postgres', 'postgres', '-Atq', '-v', 'ON_ERROR_STOP=1',
    '-c', "BEGIN; INSERT INTO organizations (name) VALUES ('psql org'); COMMIT", '-c', "SELECT count(*) FROM organizations WHERE name = 'psql org'"])
  t.equal(stdout.trim(), '1')
  t.equal(await count('psql org'), 1, 'the owner sees it')
  t.equal(statSync(socketPath(dataDir)).mode & 0o777, 0o600, 'only this user may connect (no password guards the socket)')
})

t.test('a client naming no user, or another one, reaches the one database (PGlite ends its only session on a user it lacks)', async t => {
  // The DataRow of one column, 'postgres'.
  const row = Buffer.concat([Buffer.from('D'), Buffer.from([0, 0, 0, 18, 0, 1, 0, 0, 0, 8]), Buffer.from('postgres')])
  for (const startup of [{}, { user: '' }, { user: 'someone', database: 'elsewhere' }] as Array<Record<string, string>>) {
    const { socket, received } = await rawClient(startup)
    socket.write(serialize.query('SELECT current_user AS who'))
    await until('the answer', () => received().includes('SELECT 1\0'), 5000)
    t.ok(received().includes(row), `${JSON.stringify(startup)}: connected as postgres`)
    socket.destroy()
  }
  t.equal(await count('psql org'), 1, 'the owner\'s database is still there')
})

t.test('a client\'s open transaction makes in-process statements wait; they then see what was committed only', async t => {
  const c = await client()
  t.teardown(async () => { await c.end() })
  for (const [end, expected] of [['ROLLBACK', 0], ['COMMIT', 1]] as const) {
    await c.query('BEGIN')
    await c.query(insert, ['held']) // the extended protocol
    const counted = watch(count('held'))
    await sleep(300)
    t.notOk(counted.settled(), `${end}: the in-process count waits for the client's transaction`)
    await c.query(end)
    t.equal(await counted.promise, expected, `after ${end}: ${expected} row`)
  }
})

t.test('between a client\'s Parse and its Sync, in-process statements wait; the unnamed statement stays the client\'s', async t => {
  const { socket, received } = await rawClient()
  t.teardown(() => socket.destroy())
  socket.write(serialize.parse({ text: 'SELECT $1::text AS mine' }))
  socket.write(serialize.flush())
  await sleep(100)
  const inProcess = watch(db.prisma.$queryRaw<Array<{ theirs: string }>>`SELECT ${'theirs'}::text AS theirs`)
  await sleep(300)
  t.notOk(inProcess.settled(), 'the in-process statement waits for the Sync')
  socket.write(Buffer.concat([serialize.bind({ values: ['client value'] }), serialize.execute(), serialize.sync()]))
  t.same(await inProcess.promise, [{ theirs: 'theirs' }])
  await sleep(100)
  t.ok(received().includes(Buffer.from('client value')), 'the client\'s statement ran with its own parameter')
})

t.test('a client gone mid-transaction or mid-exchange leaves nothing behind; the owner goes on', async t => {
  const c = await client()
  await c.query('BEGIN')
  await c.query(insert, ['killed'])
  const counted = watch(count('killed'))
  await sleep(200)
  t.notOk(counted.settled());
  (c as unknown as { connection: { stream: Socket } }).connection.stream.destroy()
  t.equal(await counted.promise, 0, 'a killed client\'s transaction is rolled back')

  // Execute without Sync, then gone: rolled back, not synced (a Sync would commit it).
  const { socket } = await rawClient()
  socket.write(Buffer.concat([serialize.parse({ text: "INSERT INTO organizations (name) VALUES ('unsynced')" }), serialize.bind(), serialize.execute(), serialize.flush()]))
  await sleep(200)
  socket.destroy()
  t.equal(await count('unsynced'), 0, 'an exchange left before its Sync is not committed')
  const next = await client()
  await next.query(insert, ['after'])
  await next.end()
  t.equal(await count('after'), 1, 'clients after it work')
})

t.test(`a client silent inside its transaction for ${DOOR_IDLE_MS} ms is rolled back and disconnected`, async t => {
  const c = await client()
  const errors: Array<Error & { code?: string }> = []
  c.on('error', error => { errors.push(error) })
  await c.query('BEGIN')
  await c.query(insert, ['idle'])
  const started = performance.now()
  t.equal(await count('idle'), 0, 'the owner goes on once the client is dropped, without its row')
  const waited = performance.now() - started
  t.ok(waited > DOOR_IDLE_MS - 500 && waited < DOOR_IDLE_MS + 3000, `waited ${Math.round(waited)} ms`)
  await sleep(100)
  t.match(errors, [{ code: '25P03' }], 'the client is told why')
})

t.test('a client\'s SET lasts until its exchange ends: the owner\'s statements never see it', async t => {
  const c = await client()
  t.teardown(async () => { await c.end() })
  const ownerZone = async (): Promise<string> => (await db.prisma.$queryRaw<Array<{ z: string, at: string }>>`SELECT current_setting('TimeZone') AS z, '2026-01-01 00:00'::timestamptz::text AS at`).map(r => `${r.z} ${r.at}`)[0]!
  await c.query("SET TimeZone = 'Asia/Tokyo'")
  t.equal(await ownerZone(), 'UTC 2026-01-01 00:00:00+00', 'after a SET')
  t.equal((await c.query('SHOW TimeZone')).rows[0].TimeZone, 'UTC', 'the client\'s next exchange starts from the defaults too')
  await c.query('BEGIN')
  await c.query("SET TimeZone = 'Asia/Tokyo'")
  t.equal((await c.query("SELECT '2026-01-01 00:00+00'::timestamptz::text AS at")).rows[0].at, '2026-01-01 09:00:00+09', 'within its transaction, the client\'s setting holds')
  const during = watch(ownerZone())
  await c.query('COMMIT')
  t.equal(await during.promise, 'UTC 2026-01-01 00:00:00+00', 'after the transaction')
})

t.test('notifications of a client\'s transaction go to the owner\'s listeners, not to the client', async t => {
  const heard: string[] = []
  const subscription = await db.listen('caller_changed', { onNotification: p => { heard.push(p) }, onHeard: () => {}, onState: () => {} })
  t.teardown(subscription.close)
  const c = await client()
  t.teardown(async () => { await c.end() })
  const toClient: unknown[] = []
  c.on('notification', n => { toClient.push(n) })
  await c.query("NOTIFY caller_changed, 'from the door'")
  await c.query("SELECT pg_notify('caller_changed', 'extended')")
  await sleep(50)
  t.same(heard, ['from the door', 'extended'])
  t.same(toClient, [])
})

t.test('several clients at once, beside in-process writes: every transaction whole', async t => {
  const pool = new pg.Pool({ host: dataDir, user: 'postgres', database: 'postgres', max: 6 })
  t.teardown(async () => { await pool.end() })
  await Promise.all([
    ...Array.from({ length: 30 }, async (_, i) => {
      const c = await pool.connect()
      try {
        await c.query('BEGIN')
        await c.query(insert, ['many'])
        if (i % 3 === 0) await sleep(5)
        await c.query(insert, ['many'])
        await c.query('COMMIT')
      } finally { c.release() }
    }),
    ...Array.from({ length: 20 }, async () => { await db.prisma.organization.create({ data: { name: 'many' } }) }),
  ])
  t.equal(await count('many'), 80)
})

t.test(`${DOOR_CLIENTS_MAX} clients at once; one more is refused`, async t => {
  const clients = await Promise.all(Array.from({ length: DOOR_CLIENTS_MAX }, client))
  t.teardown(async () => { await Promise.all(clients.map(async c => { await c.end() })) })
  await t.rejects(client(), { code: '53300' })
})
