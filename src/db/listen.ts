import { setTimeout as wait } from 'node:timers/promises'
import pg from 'pg'

// LISTEN/NOTIFY, which Prisma does not offer: on a server, a connection of its own (a pooled
// one may be handed to another query, and LISTEN belongs to a session); on the embedded
// database, PGlite's own listen().

export interface ListenHandlers {
  onNotification: (payload: string) => void
  /** True once listening, false whenever notifications may have been missed since. */
  onState: (listening: boolean) => void
}

export interface Subscription { close: () => Promise<void> }

const HEARTBEAT_MS = 5000
const RETRY_MAX_MS = 5000

const sleep = async (ms: number, signal?: AbortSignal): Promise<void> => { await wait(ms, undefined, { ref: false, ...(signal !== undefined ? { signal } : {}) }).catch(() => {}) }

/**
 * Listens on `channel` until closed, reconnecting with a growing delay. A connection that
 * stops answering (a frozen server, a dropped route) is found by a heartbeat and replaced,
 * so `onState(false)` comes within HEARTBEAT_MS + timeoutMs of notifications stopping.
 * Resolves once the first attempt has succeeded or failed (within timeoutMs).
 */
export async function listenOnServer (url: string, channel: string, handlers: ListenHandlers, timeoutMs: number): Promise<Subscription> {
  const closing = new AbortController()
  let firstAttempt: () => void = () => {}
  const attempted = new Promise<void>(resolve => { firstAttempt = resolve })
  let current: pg.Client | undefined
  const drop = (client: pg.Client): void => { (client as unknown as { connection?: { stream?: { destroy: () => void } } }).connection?.stream?.destroy() }
  // end() waits for the server's goodbye, which a frozen server never sends.
  const end = async (client: pg.Client): Promise<void> => { await Promise.race([client.end().catch(() => {}), sleep(timeoutMs)]) }

  async function session (): Promise<void> {
    const client = new pg.Client({ connectionString: url, application_name: 'screening-read-api:listen', connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, keepAlive: true })
    const ended = new Promise<void>(resolve => { client.once('end', resolve) })
    client.on('error', () => { drop(client) })
    current = client
    try {
      await client.connect()
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
    } catch (error) {
      firstAttempt()
      drop(client)
      await end(client)
      throw error
    }
    client.on('notification', message => { handlers.onNotification(message.payload ?? '') })
    handlers.onState(true)
    firstAttempt()
    const heartbeat = setInterval(() => { client.query('SELECT 1').catch(() => { drop(client) }) }, HEARTBEAT_MS)
    await ended
    clearInterval(heartbeat)
    if (!closing.signal.aborted) handlers.onState(false)
  }

  const loop = (async () => {
    let delay = 100
    while (!closing.signal.aborted) {
      await session().then(() => { delay = 100 }, () => { delay = Math.min(delay * 2, RETRY_MAX_MS) })
      await sleep(delay, closing.signal)
    }
  })()

  await attempted
  return {
    close: async () => {
      closing.abort()
      if (current !== undefined) { await end(current); drop(current) }
      await loop
    },
  }
}
