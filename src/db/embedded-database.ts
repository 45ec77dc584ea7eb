import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import { claimDataDir, DataDirInUse, type DataDirClaim, type DataDirOwner } from './data-dir-claim.js'
import { client, readerOf, type ClientOptions, type Database } from './database.js'
import { Door } from './door.js'
import { applyMigrations } from './migrations.js'
import { installQueue } from './queue.js'
import { tracedAdapterFactory } from '../telemetry/traced-adapter.js'

// The embedded PostgreSQL (PGlite) as the service's Database: in memory, or in a data
// directory this process claims and serves on its socket (data-dir-claim.ts, door.ts).

/**
 * Wraps an open PGlite; closing the Database closes it. With `owned`, the data directory it
 * claimed and the door it serves there (closed first, released last).
 */
export function embeddedDatabase (pglite: PGlite, options: ClientOptions = {}, owned?: { dataDir: string, claim: DataDirClaim, door: Door }): Database {
  const adapterFactory = tracedAdapterFactory(new PrismaPGlite(pglite))
  const prisma = client(adapterFactory, options)
  const reader = readerOf(adapterFactory, prisma, options)
  return {
    prisma,
    kind: 'embedded',
    adapterFactory,
    listen: async (channel, handlers) => {
      const unlisten = await pglite.listen(channel, payload => { handlers.onNotification(payload) })
      // A notification from a door client's transaction comes in that client's answer.
      const leave = owned?.door.listen(channel, payload => { handlers.onNotification(payload) })
      // In the process: what is notified is heard for as long as the database is open.
      handlers.onHeard(Infinity)
      handlers.onState(true)
      return { close: async () => { leave?.(); await unlisten() } }
    },
    read: async query => await query(reader),
    replicas: () => [],
    watchReplicas: () => () => {},
    pools: () => [],
    queue: { kind: 'embedded', pglite },
    primary: reader,
    replayed: async () => true,
    ...(owned !== undefined ? { dataDir: owned.dataDir } : {}),
    close: async () => {
      await owned?.door.close()
      await prisma.$disconnect()
      await pglite.close()
      await owned?.claim.release()
    },
  }
}

/**
 * PostgreSQL embedded in the process (PGlite), so that a newcomer needs nothing installed.
 * `dataDir` undefined keeps it in memory. Migrations are applied on open. A directory is
 * claimed first (data-dir-claim.ts) and served on its socket (door.ts); one that a live
 * process owns is DataDirInUse.
 */
export async function openEmbeddedDatabase (dataDir: string | undefined, options: ClientOptions = {}): Promise<Database & { created: boolean }> {
  const opened = await openOrFindOwner(dataDir, options)
  if ('owner' in opened) throw new DataDirInUse(opened.dataDir, opened.owner)
  return opened
}

export async function openOrFindOwner (dataDir: string | undefined, options: ClientOptions): Promise<(Database & { created: boolean }) | { dataDir: string, owner: DataDirOwner | undefined }> {
  let owned
  if (dataDir !== undefined) {
    dataDir = resolve(dataDir)
    const door = new Door()
    const claim = await claimDataDir(dataDir, socket => { door.accept(socket) })
    if ('owner' in claim) return { dataDir, owner: claim.owner }
    owned = { dataDir, claim, door }
  }
  const created = dataDir === undefined || !existsSync(join(dataDir, 'PG_VERSION'))
  let database
  try {
    const pglite = new PGlite(dataDir)
    database = embeddedDatabase(pglite, options, owned)
    await applyMigrations(database.adapterFactory)
    await installQueue(database.queue)
    owned?.door.serve(pglite)
  } catch (error) {
    if (database !== undefined) await database.close()
    else { await owned?.door.close(); await owned?.claim.release() }
    throw error
  }
  return { ...database, created }
}
