import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createEmbeddedDataDir } from '../helpers/database.js'
import { admin, holdings, launch } from '../helpers/data-dir-processes.js'
import { startServer } from '../helpers/server-process.js'

// A killed owner (kill -9, a crash) leaves its socket behind, answering nobody: the next start
// takes the directory over, and of two starters at once only one does (data-dir-claim.ts).

const scratch = mkdtempSync(join(tmpdir(), 'screening-stale-'))
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))

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
