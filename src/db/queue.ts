import type { PGlite } from '@electric-sql/pglite'
import { fromPglite, PgBoss, type ConstructorOptions } from 'pg-boss'

// The job queue every instance shares: pg-boss, in its own schema (`pgboss`) of the service's
// database, on the server or embedded (docs/decisions.md, "Webhooks: the job queue"). The
// schema is installed and upgraded where migrations run, as the database's owner; an instance
// only reads and writes its tables (prisma/sql/api-role.sql grants them to the API's role).

/** Where the queue lives: the database's server, or the embedded database itself. */
export type QueueTarget = { kind: 'server', connectionString: string } | { kind: 'embedded', pglite: PGlite }

/** The queue's connection options: a small pool of its own on a server, the one PGlite connection embedded. */
function connection (target: QueueTarget): ConstructorOptions {
  return target.kind === 'server'
    // allowExitOnIdle (pg.Pool's, passed through): idle connections keep no process alive.
    ? { connectionString: target.connectionString, max: 4, application_name: 'screening-read-api:queue', ...{ allowExitOnIdle: true } }
    : { backend: 'pglite', db: fromPglite(target.pglite) }
}

/** Installs pg-boss's schema, or upgrades it to the installed package's: run as the owner, with the migrations. */
export async function installQueue (target: QueueTarget): Promise<void> {
  const boss = new PgBoss({ ...connection(target), supervise: false, schedule: false, migrate: true })
  boss.on('error', () => {}) // start() rejects with the same error
  await boss.start()
  await boss.stop({ graceful: false })
}

/** An instance's handle on the queue; it never changes the schema (installQueue does). */
export function openQueue (target: QueueTarget, options: ConstructorOptions = {}): PgBoss {
  return new PgBoss({ ...connection(target), migrate: false, createSchema: false, ...options })
}
