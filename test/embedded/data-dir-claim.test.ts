import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { openEmbeddedDatabase } from '../../src/db/embedded-database.js'
import { openDatabase } from '../../src/db/open-database.js'
import { createEmbeddedDataDir } from '../helpers/database.js'

// The claim of an embedded data directory (src/db/data-dir-claim.ts), within one process:
// refused while owned, reached through the owner's socket instead, refused for a path no
// socket can have. Across processes: data-dir-owner.test.ts.

const scratch = mkdtempSync(join(tmpdir(), 'screening-claim-'))
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))
const dataDir = join(scratch, 'data')
await createEmbeddedDataDir(dataDir)
const db = await openEmbeddedDatabase(dataDir)
t.teardown(db.close)

t.test('a second open of the directory is refused naming this process; beside it, openDatabase reaches it through the socket', async t => {
  await t.rejects(openEmbeddedDatabase(dataDir), { message: new RegExp(`in use by process ${process.pid} `) })
  const door = await openDatabase({ ...loadConfig(), DATA_DIR: dataDir }, { beside: 'door' })
  t.teardown(door.close)
  t.equal(door.kind, 'server')
  t.equal(door.throughDoor?.owner?.pid, process.pid)
  await door.prisma.organization.create({ data: { name: 'through openDatabase' } })
  t.equal(await db.prisma.organization.count({ where: { name: 'through openDatabase' } }), 1, 'the owner sees the write')
})

t.test('a DATA_DIR too long for a socket path is refused naming it, before anything is made', async t => {
  const long = join(scratch, 'x'.repeat(110))
  await t.rejects(openEmbeddedDatabase(long), { message: new RegExp(`DATA_DIR ${long} is too long`) })
})
