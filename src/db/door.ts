import type { Socket } from 'node:net'
import type { PGlite } from '@electric-sql/pglite'
import { DoorSession } from './door-session.js'
import { fatal, hangUpOn, type Notification } from './wire-messages.js'

// The door: the owner of an embedded data directory serves its PGlite as PostgreSQL on the
// directory's socket (data-dir-claim.ts), so that admin commands and psql reach the running
// service's database instead of opening the directory a second time (docs/decisions.md).

/** Clients at once: an admin command's pool and its queue's (pg-boss: 4), psql, with room to spare. */
export const DOOR_CLIENTS_MAX = 16

export class Door {
  private readonly sessions = new Set<DoorSession>()
  private readonly listeners = new Map<string, Set<(payload: string) => void>>()
  private opened!: (pglite: PGlite) => void
  private failed!: (error: Error) => void
  private readonly database = new Promise<PGlite>((resolve, reject) => { this.opened = resolve; this.failed = reject })
  private closing = false

  constructor () {
    this.database.catch(() => {})
  }

  /** The database is open and migrated: clients reach it from now on. */
  serve (pglite: PGlite): void { this.opened(pglite) }

  /**
   * Calls `listener` with the payload of every notification on `channel` that a client's
   * transaction sent (PGlite hands them to the client's answer, not to its own listeners).
   */
  listen (channel: string, listener: (payload: string) => void): () => void {
    const set = this.listeners.get(channel) ?? new Set()
    this.listeners.set(channel, set.add(listener))
    return () => { set.delete(listener) }
  }

  /** Disconnects every client, once each one's transaction is rolled back and its state cleaned. */
  async close (): Promise<void> {
    this.closing = true
    this.failed(new Error('the embedded database is closing'))
    for (const session of this.sessions) session.end()
    await Promise.all([...this.sessions].map(async session => { await session.done }))
  }

  /** A client connected to the socket; its messages wait until `serve`. */
  accept (socket: Socket): void {
    if (this.closing) { socket.destroy(); return }
    if (this.sessions.size >= DOOR_CLIENTS_MAX) {
      hangUpOn(socket, fatal('53300', `sorry, too many clients already: the embedded database's socket takes ${DOOR_CLIENTS_MAX} at once`))
      return
    }
    const session = new DoorSession(socket, { database: this.database, notify: n => { this.notify(n) } })
    this.sessions.add(session)
    void session.done.then(() => { this.sessions.delete(session) })
  }

  private notify ({ channel, payload }: Notification): void {
    for (const listener of this.listeners.get(channel) ?? []) listener(payload)
  }
}
