import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import { type ClientOptions, type Database } from '../../src/db/database.js'
import { embeddedDatabase } from '../../src/db/embedded-database.js'
import { openServerDatabase } from '../../src/db/server-database.js'
import { applyMigrations, readMigrations } from '../../src/db/migrations.js'
import { installQueue } from '../../src/db/queue.js'
import { zoneRules } from '../../src/zones/rules.js'
import { storeZoneRules } from '../../src/zones/store.js'
import { clientReader } from '../../src/db/sql-reader.js'

// Each test file gets a database of its own, already migrated: cloned from a template that
// is built once per migration set (a PGlite dump on disk, or a template database on the
// server), because running the migrations for every file would cost seconds each.

const CACHE = join(import.meta.dirname, '../../node_modules/.cache/screening-tests')

export const serverUrl = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== '' ? process.env.TEST_DATABASE_URL : undefined

// On a server, the app under test connects as this role, made by the script production
// uses (prisma/sql/api-role.sql), so every test runs with only the privileges it grants.
export const API_ROLE = 'screening_api_test'
const API_ROLE_SCRIPT = join(import.meta.dirname, '../../prisma/sql/api-role.sql')

async function migrationsHash (): Promise<string> {
  const list = await readMigrations()
  const h = createHash('sha256')
  for (const m of list.migrationDirectories) h.update(m.path).update(m.migrationFile.content.value)
  h.update(await readFile(API_ROLE_SCRIPT))
  h.update(zoneRules().id)
  // The job queue's schema is pg-boss's: a new release of it makes a new template.
  h.update(JSON.parse(await readFile(join(import.meta.dirname, '../../node_modules/pg-boss/package.json'), 'utf8')).version)
  return h.digest('hex').slice(0, 16)
}

/** Runs prisma/sql/api-role.sql on a database, as the admin step of docs/operations.md does. */
async function grantApiRole (url: string, role: string): Promise<void> {
  await promisify(execFile)('psql', [url, '-q', '-v', `role=${role}`, '-v', 'ON_ERROR_STOP=1', '-f', API_ROLE_SCRIPT])
}

/**
 * A new database made as production's migrate step makes it: the migrations, the job
 * queue's schema (pg-boss), then the API's role by prisma/sql/api-role.sql (which grants on
 * the queue's schema: it fails without it).
 */
export async function migrateAsProduction (owner: Database, url: string, role: string): Promise<void> {
  await applyMigrations(owner.adapterFactory)
  await installQueue(owner.queue)
  await grantApiRole(url, role)
}

/**
 * The database `screening` made on a server (a replicated pair's primary: `urlOf` gives a
 * database's URL there) as production makes it, with the API's role `screening_api`; the
 * owner's handle, closed at teardown.
 */
export async function productionDatabase (t: { teardown: (fn: () => Promise<void>) => void }, urlOf: (database: string) => string): Promise<Database> {
  const admin = new pg.Client({ connectionString: urlOf('postgres') })
  await admin.connect()
  await admin.query('CREATE DATABASE screening')
  await admin.end()
  const owner = openServerDatabase(urlOf('screening'), { DB_POOL_MAX: 3, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 30_000, DB_STATEMENT_TIMEOUT_MS: 30_000 })
  t.teardown(owner.close)
  await migrateAsProduction(owner, urlOf('screening'), 'screening_api')
  return owner
}

/** `url` with another user. */
function asRole (url: string, role: string): string {
  const withRole = new URL(url)
  withRole.username = role
  withRole.password = ''
  return withRole.toString()
}

async function embeddedTemplate (): Promise<Blob> {
  const file = join(CACHE, `pglite-${await migrationsHash()}.tar.gz`)
  const cached = await readFile(file).catch(() => undefined)
  if (cached !== undefined) return new Blob([cached])
  const db = new PGlite()
  await applyMigrations(new PrismaPGlite(db))
  // The zone rules, as the migrate step stores them (else each app would, at its start).
  await db.query('SELECT load_zone_rules($1)', [zoneRules().text])
  await installQueue({ kind: 'embedded', pglite: db })
  const dump = await db.dumpDataDir('gzip')
  await db.close()
  await mkdir(CACHE, { recursive: true })
  const tmp = `${file}.${process.pid}.tmp`
  await writeFile(tmp, Buffer.from(await dump.arrayBuffer()))
  await rename(tmp, file)
  return dump
}

/** A migrated embedded database (the template), as PGlite itself, in memory: for tests that speak its protocol. */
export async function openTemplatePGlite (): Promise<PGlite> {
  const db = new PGlite({ loadDataDir: await embeddedTemplate() })
  await db.waitReady
  return db
}

/**
 * Writes a migrated embedded database (the template) into `dir`, for a process of its own to
 * open with DATA_DIR: seconds fewer than having it create one and run every migration.
 */
export async function createEmbeddedDataDir (dir: string): Promise<void> {
  const db = new PGlite(dir, { loadDataDir: await embeddedTemplate() })
  await db.waitReady
  await db.close()
}

function databaseUrl (base: string, name: string): string {
  const url = new URL(base)
  url.pathname = `/${name}`
  return url.toString()
}

// Databases made for tests are named after the one TEST_DATABASE_URL names, so whoever made
// that one can drop them all (`<name>_tpl_<hash>`, `<name>_t_<random>`).
const family = (url: string): string => new URL(url).pathname.slice(1).replace(/[^a-z0-9_]/gi, '_').slice(0, 30) || 'screening'

async function serverTemplate (admin: pg.Client, base: string): Promise<string> {
  const name = `${family(base)}_tpl_${await migrationsHash()}`
  // One process builds the template; the others wait on the lock and then find it.
  await admin.query('SELECT pg_advisory_lock(727272)')
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
    if (exists.rowCount === 0) {
      const building = `${name}_building`
      await admin.query(`DROP DATABASE IF EXISTS ${building}`)
      await admin.query(`CREATE DATABASE ${building}`)
      const db = openServerDatabase(databaseUrl(base, building), { DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 30_000, DB_STATEMENT_TIMEOUT_MS: 30_000 })
      await applyMigrations(db.adapterFactory)
      await storeZoneRules(clientReader(db.prisma), zoneRules())
      await installQueue(db.queue)
      await db.close()
      // Grants live in the database, so every clone has them; the role is cluster-wide.
      await grantApiRole(databaseUrl(base, building), API_ROLE)
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`)
    }
  } finally {
    await admin.query('SELECT pg_advisory_unlock(727272)')
  }
  return name
}

export interface TestDatabase extends Database {
  /** Connection string of this file's database on the server, as its owner; undefined when embedded. */
  url?: string
  /** The same database as API_ROLE, for the app under test; undefined when embedded. */
  apiUrl?: string
}

/** A fresh, migrated database for one test file. Closing it drops it. */
export async function createTestDatabase (options: ClientOptions = {}): Promise<TestDatabase> {
  if (serverUrl === undefined) {
    const db = embeddedDatabase(new PGlite({ loadDataDir: await embeddedTemplate() }), options)
    // The first query of a restored PGlite pays for its start-up; pay it here, not in a test.
    await db.prisma.$queryRaw`SELECT 1`
    return db
  }
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  const name = `${family(serverUrl)}_t_${randomBytes(6).toString('hex')}`
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${await serverTemplate(admin, serverUrl)}`)
  } finally {
    await admin.end()
  }
  const url = databaseUrl(serverUrl, name)
  // A clone is another database history than its template's (src/changes/history.ts): its
  // change log is adopted now, as the service's upkeep would within its first minute.
  const clone = new pg.Client({ connectionString: url })
  await clone.connect()
  try {
    await clone.query('SELECT adopt_database_history()')
  } finally {
    await clone.end()
  }
  const db = openServerDatabase(url, { DB_POOL_MAX: 5, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 30_000, DB_STATEMENT_TIMEOUT_MS: 30_000 }, options)
  return {
    ...db,
    url,
    apiUrl: asRole(url, API_ROLE),
    close: async () => {
      await db.close()
      const drop = new pg.Client({ connectionString: serverUrl })
      await drop.connect()
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await drop.end()
    },
  }
}
