import type { Config } from '../config.js'
import { doorUrl, DataDirInUse, type DataDirOwner } from './data-dir-claim.js'
import type { ClientOptions, Database } from './database.js'
import { openOrFindOwner } from './embedded-database.js'
import { openServerDatabase } from './server-database.js'

// The database the configuration names: DATABASE_URL's server, else the embedded one in
// DATA_DIR, or, when a live process owns that directory, its database through its socket.

export interface OpenOptions extends ClientOptions {
  /**
   * An embedded data directory a live process owns: 'refuse' (DataDirInUse, the default: a
   * service starting beside it) or 'door' (its database through its socket: commands that
   * only write; `throughDoor` then says so, with the owner when it is known).
   */
  beside?: 'refuse' | 'door'
}

export async function openDatabase (config: Config, options: OpenOptions = {}): Promise<Database & { created: boolean, throughDoor?: { owner: DataDirOwner | undefined } }> {
  if (config.DATABASE_URL !== undefined) {
    const replicaUrls = config.DATABASE_REPLICA_URLS.split(',').filter(Boolean)
    const listenUrl = config.DATABASE_LISTEN_URL ?? config.DATABASE_URL
    return { ...openServerDatabase(config.DATABASE_URL, config, { ...options, replicaUrls, listenUrl }), created: false }
  }
  const opened = await openOrFindOwner(config.DATA_DIR, options)
  if (!('owner' in opened)) return opened
  if (options.beside !== 'door') throw new DataDirInUse(opened.dataDir, opened.owner)
  // The owner migrated it. A small pool: its exchanges are served one at a time anyway; a
  // connection may wait for an owner still opening it (a first start's migrations: seconds).
  const database = openServerDatabase(doorUrl(opened.dataDir), { ...config, DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: Math.max(config.DB_CONNECTION_TIMEOUT_MS, 30_000) }, { ...options, statementNames: false })
  return { ...database, created: false, throughDoor: { owner: opened.owner } }
}
