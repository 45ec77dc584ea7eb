// The bench's own database, made beside the one the URL names and dropped at the end (by the
// cleanup, so also on failure or Ctrl-C). Migrated and granted as production is: the
// migrations through the schema engine and the zone rules, then prisma/sql/api-role.sql for
// the API's role.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { openServerDatabase } from '../src/db/server-database.js'
import { applyMigrations } from '../src/db/migrations.js'
import { installQueue } from '../src/db/queue.js'
import { zoneRules } from '../src/zones/rules.js'
import { storeZoneRules } from '../src/zones/store.js'
import { onCleanup } from './cleanup.js'
import { clientReader } from '../src/db/sql-reader.js'

/** The role the servers connect as: only the API's privileges, like production's. */
export const API_ROLE = 'screening_api_bench'
const API_ROLE_SCRIPT = join(import.meta.dirname, '../prisma/sql/api-role.sql')

export interface BenchDatabase {
  name: string
  /** As the owner of the server URL: for loading data. */
  url: string
  /** As API_ROLE: for the servers under test. */
  apiUrl: string
}

function withDatabase (base: string, name: string, user?: string): string {
  const url = new URL(base)
  url.pathname = `/${name}`
  if (user !== undefined) {
    url.username = user
    url.password = ''
  }
  return url.toString()
}

async function adminQuery (serverUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    await admin.query(sql)
  } finally {
    await admin.end()
  }
}

export async function createBenchDatabase (serverUrl: string): Promise<BenchDatabase> {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14)
  const name = `bench_${stamp}_${process.pid}`
  // Registered first so that a half-made database is dropped too.
  onCleanup(`drop database ${name}`, async () => {
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    console.log(`dropped database ${name}`)
  })
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`)
  const url = withDatabase(serverUrl, name)
  const db = openServerDatabase(url, { DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 60_000, DB_STATEMENT_TIMEOUT_MS: 60_000 })
  try {
    await applyMigrations(db.adapterFactory)
    // The zone rules, as production's migrate step stores them.
    await storeZoneRules(clientReader(db.prisma), zoneRules())
    // And the job queue's schema (webhooks), as the migrate step installs it.
    await installQueue(db.queue)
  } finally {
    await db.close()
  }
  await promisify(execFile)('psql', [url, '-q', '-v', `role=${API_ROLE}`, '-v', 'ON_ERROR_STOP=1', '-f', API_ROLE_SCRIPT])
  return { name, url, apiUrl: withDatabase(serverUrl, name, API_ROLE) }
}
