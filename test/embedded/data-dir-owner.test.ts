import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createEmbeddedDataDir } from '../helpers/database.js'
import { admin, holdings, me, secondStart } from '../helpers/data-dir-processes.js'
import { startServer } from '../helpers/server-process.js'

// Issue 55, finding 10: `npm run admin` beside a running `npm start` printed a key and exited
// 0, yet the server answered 401 to it and the key was gone after a restart (two processes on
// one PGlite directory; once it no longer opened). One process owns the directory: admin
// commands reach its database through its socket, a second start is refused, and the
// directory opens holding every acknowledged write.

const ROUNDS = 20
const scratch = mkdtempSync(join(tmpdir(), 'screening-owner-'))
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))

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
