import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import pg from 'pg'
import t from 'tap'
import { applyApiRole, gexecQueries, scramVerifier } from '../../src/db/api-role.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { applyMigrations } from '../../src/db/migrations.js'
import { installQueue } from '../../src/db/queue.js'
import { serverUrl } from '../helpers/database.js'
import { replicationTools, startReplicatedPair } from '../helpers/replication.js'
import { sleep } from '../helpers/sleep.js'

// The migrate step's API role (src/db/api-role.ts), as Compose runs it: on a primary and a
// standby of our own whose pg_hba.conf requires the role's password (SCRAM), as the postgres
// image's does; the machine's cluster trusts every local connection, which would prove nothing.

t.test('the script as the migrate step reads it: \\gexec and :\'role\' only', async t => {
  const queries = gexecQueries(readFileSync('prisma/sql/api-role.sql', 'utf8'), { role: 'a"b\'c' })
  t.ok(queries.length >= 5, `${queries.length} queries`)
  t.ok(queries.every(q => q.includes("'a\"b''c'") && !q.includes(':\'role\'')), 'the role quoted as a literal everywhere')
  t.throws(() => gexecQueries('\\set x 1\nSELECT 1 \\gexec\n', {}), /only \\gexec/)
  t.throws(() => gexecQueries('SELECT :\'other\' \\gexec\n', { role: 'x' }), /no value for :'other'/)
  t.throws(() => gexecQueries('SELECT 1;\n', {}), /without \\gexec/)
  t.throws(() => scramVerifier('pässword'), /printable ASCII/)
  t.match(scramVerifier('secret'), /^SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}:[A-Za-z0-9+/=]{44}$/)
})

const tools = replicationTools()
const skip = serverUrl === undefined ? 'a server run only (TEST_DATABASE_URL), like the other replica tests' : 'missing' in tools ? tools.missing : false

t.test('made, then updated; it logs in with its password on the primary and the standby, and is not a superuser', { skip }, async t => {
  const pair = await startReplicatedPair((tools as { bindir: string }).bindir)
  t.teardown(pair.close)
  const admin = new pg.Client({ connectionString: pair.primaryUrl('postgres') })
  await admin.connect()
  await admin.query('CREATE DATABASE screening')
  await admin.end()
  const owner = openServerDatabase(pair.primaryUrl('screening'), { DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 30_000, DB_STATEMENT_TIMEOUT_MS: 30_000 })
  t.teardown(owner.close)
  // As the migrate step: the migrations, the queue's schema (the script grants on it), the role.
  await applyMigrations(owner.adapterFactory)
  await installQueue(owner.queue)

  // The role's logins need its password, on both servers (first matching line wins).
  for (const url of [pair.primaryUrl('postgres'), pair.standbyUrl('postgres')]) {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    const file = (await c.query<{ hba_file: string }>('SHOW hba_file')).rows[0]!.hba_file
    writeFileSync(file, `host all screening_api 127.0.0.1/32 scram-sha-256\n${readFileSync(file, 'utf8')}`)
    await c.query('SELECT pg_reload_conf()')
    await c.end()
  }
  const as = (url: string, password: string): string => url.replace('postgres@', `screening_api:${password}@`)
  /** Connects and runs `sql`: the rows, or the SQLSTATE of the failure. */
  const attempt = async (url: string, sql: string): Promise<unknown> => {
    const c = new pg.Client({ connectionString: url })
    try {
      await c.connect()
      return (await c.query(sql)).rows
    } catch (error) {
      return (error as { code?: string }).code ?? String(error)
    } finally {
      await c.end().catch(() => {})
    }
  }

  const first = randomBytes(24).toString('hex')
  await applyApiRole(pair.primaryUrl('screening'), 'screening_api', first)
  t.same(await attempt(as(pair.primaryUrl('screening'), first), 'SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user'), [{ rolsuper: false, rolcreaterole: false, rolcreatedb: false }], 'logs in on the primary; no superuser, role or database rights')
  t.same(await attempt(as(pair.primaryUrl('screening'), first), 'SELECT count(*)::int AS n FROM jobs'), [{ n: 0 }], 'reads the tables')
  t.equal(await attempt(as(pair.primaryUrl('screening'), first), 'INSERT INTO organizations (id, name) VALUES (gen_random_uuid(), \'x\')'), '42501', 'writes nothing but what the script grants')
  t.equal(await attempt(as(pair.primaryUrl('screening'), 'wrong'), 'SELECT 1'), '28P01', 'a wrong password is refused: the password is what guards it')

  // Replica reads: the role and its password are the cluster's, replicated to the standby.
  let onStandby: unknown
  for (let i = 0; i < 50; i++) {
    onStandby = await attempt(as(pair.standbyUrl('screening'), first), 'SELECT pg_is_in_recovery() AS standby, count(*)::int AS n FROM jobs')
    if (Array.isArray(onStandby)) break
    await sleep(100)
  }
  t.same(onStandby, [{ standby: true, n: 0 }], 'logs in on the standby and reads there')

  const second = randomBytes(24).toString('hex')
  await applyApiRole(pair.primaryUrl('screening'), 'screening_api', second)
  t.equal(await attempt(as(pair.primaryUrl('screening'), first), 'SELECT 1'), '28P01', 'run again with a new password: the old one is refused')
  t.same(await attempt(as(pair.primaryUrl('screening'), second), 'SELECT 1 AS one'), [{ one: 1 }], 'and the new one accepted')

  await t.rejects(applyApiRole(pair.primaryUrl('screening'), 'postgres', second), /the owner migrate connects as/, 'the owner is never made the API role')
  const c = new pg.Client({ connectionString: pair.primaryUrl('postgres') })
  await c.connect()
  await c.query('CREATE ROLE screening_api_super SUPERUSER LOGIN')
  await c.end()
  await t.rejects(applyApiRole(pair.primaryUrl('screening'), 'screening_api_super', second), /is a superuser/, 'nor a role someone made a superuser')
})
