// npm run db:migrate (or `node dist/migrate.js` from the build): applies pending migrations to the database DATABASE_URL names, through
// the WebAssembly schema engine (same `_prisma_migrations` table as `prisma migrate deploy`).
// With API_DB_PASSWORD set, then makes or updates the API's role (API_DB_ROLE, screening_api
// by default) from prisma/sql/api-role.sql with that password: docker-compose.yml's migrate
// step does, so that the API never connects as the owner. They are the migrate step's
// settings, not the service's: read here, not in the service's configuration.
import { applyApiRole } from './db/api-role.js'
import { ConfigError, loadConfig } from './config.js'
import { openServerDatabase } from './db/server-database.js'
import { applyMigrations } from './db/migrations.js'
import { installQueue } from './db/queue.js'
import { configuredZoneRules } from './zones/rules.js'
import { storeZoneRules } from './zones/store.js'
import { clientReader } from './db/sql-reader.js'

try {
  const config = loadConfig()
  if (config.DATABASE_URL === undefined) {
    console.error('DATABASE_URL is not set. (The embedded database migrates itself on start.)')
    process.exit(2)
  }
  // Without the service's time limits (0: none): a migration's backfill of a large table
  // takes longer than any request may (the summaries' rebuild of 2M screens, about 10 s).
  const db = openServerDatabase(config.DATABASE_URL, { ...config, DB_QUERY_TIMEOUT_MS: 0, DB_STATEMENT_TIMEOUT_MS: 0 })
  try {
    const applied = await applyMigrations(db.adapterFactory, undefined, {
      lockTimeoutMs: config.MIGRATION_LOCK_TIMEOUT_MS,
      retryForMs: config.MIGRATION_RETRY_FOR_S * 1000,
      onRetry: (attempt, error) => { console.error(`a migration is waiting for a lock (attempt ${attempt}: ${error.message}); trying again`) },
    })
    console.log(applied.length === 0 ? 'No pending migrations.' : `Applied: ${applied.join(', ')}`)
    // The job queue's schema (pg-boss's own), installed or upgraded as the owner.
    await installQueue(db.queue)
    console.log('Job queue: installed (pg-boss).')
    // The release's zone rules, before its instances start (they would store them otherwise).
    const rules = configuredZoneRules(config)
    await storeZoneRules(clientReader(db.prisma), rules)
    console.log(`Zone rules: tzdata ${rules.version} (${rules.id}).`)
  } finally {
    await db.close()
  }
  const password = process.env.API_DB_PASSWORD
  if (password !== undefined && password !== '') {
    const role = process.env.API_DB_ROLE ?? 'screening_api'
    await applyApiRole(config.DATABASE_URL, role, password)
    console.log(`API role ${role}: created or updated (prisma/sql/api-role.sql), password set.`)
  }
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error)
  process.exitCode = 1
}
