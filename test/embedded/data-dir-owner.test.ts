import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import t from 'tap'
import { createEmbeddedDataDir } from '../helpers/database.js'
import { startServer, type RunningServer } from '../helpers/server-process.js'
import { until } from '../helpers/until.js'

// Issue 55, finding 10: `npm run admin` beside a running `npm start` printed a key and exited
// 0, yet the server answered 401 to it and the key was gone after a restart (two processes on
// one PGlite directory; once it no longer opened). One process owns the directory: admin
// commands reach its database through its socket, a second start is refused, and the
// directory opens holding every acknowledged write.

const ROUNDS = 20
const scratch = mkdtempSync(join(tmpdir(), 'screening-owner-'))
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))

interface Run { status: number | null, stdout: string, stderr: string }

async function admin (dataDir: string, ...args: string[]): Promise<Run> {
  const { DATABASE_URL: _, ...env } = process.env
  return await new Promise(resolve => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], { env: { ...env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr })
    })
  })
}

interface Launched { child: ChildProcess, output: () => string, exited: Promise<number | null>, outcome: Promise<'served' | 'exited'> }

/** `npm start` on the directory, as a process of its own: whether it comes to serve or exits first. */
function launch (dataDir: string): Launched {
  const { DATABASE_URL: _, ...env } = process.env
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c: Buffer) => { output += c.toString() })
  child.stderr.on('data', (c: Buffer) => { output += c.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  void exited.then(() => { clearTimeout(killer) })
  const outcome = Promise.race([
    exited.then(() => 'exited' as const),
    until('the banner', () => /curl -H/.test(output) || child.exitCode !== null, 60_000).then(() => /curl -H/.test(output) ? 'served' as const : 'exited' as const),
  ])
  return { child, output: () => output, exited, outcome }
}

/** A second `npm start` on the directory: its exit code and output; one that starts serving is stopped. */
async function secondStart (dataDir: string): Promise<{ code: number | null, output: string, served: boolean }> {
  const started = launch(dataDir)
  const served = await started.outcome === 'served'
  if (served) started.child.kill('SIGTERM')
  return { code: await started.exited, output: started.output(), served }
}

const me = async (server: RunningServer, key: string): Promise<number> => (await fetch(`${server.baseUrl}/api/me`, { headers: { authorization: `Bearer ${key}` } })).status

/** What the directory holds, opened by PGlite itself once nothing runs on it. */
async function holdings (dataDir: string): Promise<{ keys: string[], orgs: string[] }> {
  const db = new PGlite(dataDir)
  try {
    const keys = (await db.query<{ prefix: string }>("SELECT prefix FROM api_keys WHERE name LIKE 'round %' ORDER BY prefix")).rows.map(r => r.prefix)
    const orgs = (await db.query<{ name: string }>("SELECT name FROM organizations WHERE name LIKE 'Owner test%' ORDER BY name")).rows.map(r => r.name)
    return { keys, orgs }
  } finally {
    await db.close()
  }
}

t.test(`admin commands and a second start beside a running server, ${ROUNDS} rounds`, async t => {
  const dataDir = join(scratch, 'rounds')
  await createEmbeddedDataDir(dataDir)
  let server = await startServer(t, {}, { dataDir })
  const org = await admin(dataDir, 'create-org', '--name', 'Owner test', '--plan', 'pro')
  t.equal(org.status, 0, 'create-org through the socket', { stderr: org.stderr })
  t.match(org.stderr, `process ${server.child.pid}, through its socket`, 'the command says whose database it used')
  const user = await admin(dataDir, 'create-user', '--org', (JSON.parse(org.stdout) as { id: string }).id, '--email', 'owner@test.test', '--name', 'Owner')
  t.equal(user.status, 0, 'create-user through the socket', { stderr: user.stderr })
  const userId = (JSON.parse(user.stdout) as { id: string }).id
  const keys: Array<{ key: string, prefix: string }> = []
  const orgs = ['Owner test']
  let refused = 0
  let accepted = 0

  const expectHoldings = async (when: string): Promise<void> => {
    const held = await holdings(dataDir)
    t.same(held.keys, keys.map(k => k.prefix).sort(), `${when}: every acknowledged key is there`)
    t.same(held.orgs, [...orgs].sort(), `${when}: every acknowledged organization is there`)
  }

  for (let round = 1; round <= ROUNDS; round++) {
    const writes = [admin(dataDir, 'create-key', '--user', userId, '--name', `round ${round}`)]
    if (round % 5 === 0) writes.push(admin(dataDir, 'create-org', '--name', `Owner test ${round}`))
    const [second, key, made] = await Promise.all([secondStart(dataDir), ...writes])
    if (second!.code === 1 && second!.output.includes(`process ${server.child.pid}`)) refused++
    t.notOk(second!.served, `round ${round}: the second start does not serve`)
    t.equal(second!.code, 1, `round ${round}: the second start exits 1`)
    t.match(second!.output, `process ${server.child.pid}`, `round ${round}: naming the running process`)
    t.equal(key!.status, 0, `round ${round}: create-key`, { stderr: key!.stderr })
    if (key!.status === 0) {
      const created = JSON.parse(key!.stdout) as { key: string, prefix: string }
      keys.push(created)
      const status = await me(server, created.key)
      if (status === 200) accepted++
      t.equal(status, 200, `round ${round}: the running server accepts the new key at once`)
    }
    if (made !== undefined) {
      t.equal(made.status, 0, `round ${round}: create-org`, { stderr: made.stderr })
      if (made.status === 0) orgs.push(`Owner test ${round}`)
    }
    if (round === ROUNDS / 2) {
      t.equal(await server.stop(), 0, 'stopped mid-way')
      await expectHoldings(`after round ${round}`)
      server = await startServer(t, {}, { dataDir })
      t.equal(await me(server, keys[0]!.key), 200, 'after the restart, the first key still works')
    }
  }

  t.match(JSON.parse(readFileSync(join(dataDir, 'owner.json'), 'utf8')), { pid: server.child.pid }, 'the refused starts wrote no owner of their own')

  // A revocation through the door clears the running server's cache at once (not after AUTH_CACHE_TTL_MS).
  const last = keys.at(-1)!
  t.equal(await me(server, last.key), 200, 'the last key works (and is cached)')
  const revoked = await admin(dataDir, 'revoke-key', '--prefix', last.prefix)
  t.equal(revoked.status, 0, 'revoke-key through the socket', { stderr: revoked.stderr })
  t.equal(await me(server, last.key), 401, 'revoked through the admin command: refused at once')

  t.equal(await server.stop(), 0, 'stopped at the end')
  await expectHoldings('at the end')
  t.comment(`second starts refused naming the owner: ${refused}/${ROUNDS}; new keys accepted at once: ${accepted}/${ROUNDS}`)
})

t.test('a server killed with SIGKILL leaves a dead socket: the next start takes it over, one starter of two', async t => {
  const dataDir = join(scratch, 'killed')
  await createEmbeddedDataDir(dataDir)
  const killed = await startServer(t, {}, { dataDir })
  const org = await admin(dataDir, 'create-org', '--name', 'Owner test killed')
  t.equal(org.status, 0, 'create-org through the socket', { stderr: org.stderr })
  t.equal(await killed.stop('SIGKILL'), null, 'killed')
  t.ok(existsSync(join(dataDir, '.s.PGSQL.5432')), 'its socket is left behind')

  // Two starters at once: the claim is made one at a time, so one serves and the other is refused.
  const starters = [launch(dataDir), launch(dataDir)]
  t.teardown(() => { for (const s of starters) s.child.kill('SIGKILL') })
  const outcomes = await Promise.all(starters.map(async s => await s.outcome))
  t.same([...outcomes].sort(), ['exited', 'served'], 'one serves')
  const [winner, loser] = outcomes[0] === 'served' ? starters : [...starters].reverse()
  t.equal(await loser!.exited, 1, 'the other exits 1')
  t.match(loser!.output(), `in use by process ${winner!.child.pid} `, 'naming the one that serves')
  const key = await admin(dataDir, 'create-key', '--user', (JSON.parse((await admin(dataDir, 'create-user', '--org', (JSON.parse(org.stdout) as { id: string }).id, '--email', 'k@test.test', '--name', 'K')).stdout) as { id: string }).id, '--name', 'round killed')
  t.equal(key.status, 0, 'create-key after the takeover', { stderr: key.stderr })
  winner!.child.kill('SIGTERM')
  t.equal(await winner!.exited, 0, 'the winner stops cleanly')
  t.same(await holdings(dataDir), { keys: [(JSON.parse(key.stdout) as { prefix: string }).prefix], orgs: ['Owner test killed'] }, 'the directory opens with what was acknowledged')
})
