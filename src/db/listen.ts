import { randomUUID } from 'node:crypto'
import { setTimeout as wait } from 'node:timers/promises'
import pg from 'pg'

// LISTEN/NOTIFY, which Prisma does not offer: on a server, a connection of its own (a pooled
// one may be handed to another query, and LISTEN belongs to a session); on the embedded
// database, PGlite's own listen().

/**
 * Why notifications are not being heard: no listening connection, or one that is connected
 * and answers but does not receive what is notified (a transaction-mode pooler, which runs
 * the LISTEN on a server connection it then hands to other clients; a listener pointed at
 * another database than the one written to).
 */
export type DeafReason = 'disconnected' | 'no_echo'

export interface ListenHandlers {
  onNotification: (payload: string) => void
  /**
   * True once a notification sent by this instance has come back, false whenever
   * notifications may have been missed since (with why).
   */
  onState: (listening: boolean, reason?: DeafReason) => void
  /**
   * False while no probe should be sent (the instance is stopping: a probe it sent then would
   * hold the pool's close for its timeout). The state stands meanwhile; LISTEN goes on.
   */
  probing?: () => boolean
}

export interface Subscription { close: () => Promise<void> }

export interface ListenOptions {
  /** Bound on connecting and on a notification's round trip. */
  timeoutMs: number
  /**
   * Sends `payload` on the channel through the connection the application writes with, so
   * that its return proves that what is notified where the data changes reaches the listener.
   */
  probe: (payload: string) => Promise<void>
  /** Time between two probes. */
  heartbeatMs?: number
}

export const HEARTBEAT_MS = 5000
const RETRY_MAX_MS = 5000

/** Payloads of the listener's own probes: never a table name, which the triggers send. */
export const PROBE_PREFIX = 'listener-probe:'

const sleep = async (ms: number, signal?: AbortSignal): Promise<void> => { await wait(ms, undefined, { ref: false, ...(signal !== undefined ? { signal } : {}) }).catch(() => {}) }

class Deaf extends Error {}

/**
 * Listens on `channel` until closed, reconnecting with a growing delay. Listening is proved,
 * not assumed: at once and every `heartbeatMs`, a probe is notified on the channel through
 * the application's own connections and must come back on the listening one within
 * `timeoutMs`. Until the first probe returns, and from a probe that does not, the state is
 * false; a probe that does not return also drops the connection (a frozen server, a dropped
 * route, a session that lost its LISTEN) for a new one. So `onState(false)` comes within
 * heartbeatMs + timeoutMs of notifications stopping, whatever stopped them. A probe that
 * cannot be sent leaves the state as it was and checks the connection with `SELECT 1`.
 * Probes, this instance's and other instances', are not passed to onNotification.
 * Resolves once the first attempt has been heard or failed (within 2 × timeoutMs).
 */
export async function listenOnServer (url: string, channel: string, handlers: ListenHandlers, options: ListenOptions): Promise<Subscription> {
  const { timeoutMs, probe } = options
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS
  const closing = new AbortController()
  // Raced with a probe: a close does not wait for one (on a frozen database, its timeout).
  const closed = new Promise<false>(resolve => { closing.signal.addEventListener('abort', () => { resolve(false) }, { once: true }) })
  const prefix = `${PROBE_PREFIX}${randomUUID()}:`
  let sent = 0
  let firstAttempt: () => void = () => {}
  const attempted = new Promise<void>(resolve => { firstAttempt = resolve })
  let current: pg.Client | undefined
  let hearing = false
  let lastReason: DeafReason | undefined
  const report = (listening: boolean, reason?: DeafReason): void => {
    if (closing.signal.aborted || (listening === hearing && reason === lastReason)) return
    hearing = listening
    lastReason = reason
    handlers.onState(listening, reason)
  }
  const drop = (client: pg.Client): void => { (client as unknown as { connection?: { stream?: { destroy: () => void } } }).connection?.stream?.destroy() }
  // end() waits for the server's goodbye, which a frozen server never sends.
  const end = async (client: pg.Client): Promise<void> => { await Promise.race([client.end().catch(() => {}), sleep(timeoutMs)]) }

  async function session (): Promise<void> {
    const client = new pg.Client({ connectionString: url, application_name: 'screening-read-api:listen', connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, keepAlive: true })
    // An object, not a variable: set by the 'end' event while the heartbeat loops.
    const connection = { over: false }
    const ended = new Promise<void>(resolve => { client.once('end', () => { connection.over = true; resolve() }) })
    client.on('error', () => { drop(client) })
    current = client
    let awaiting: { payload: string, heard: () => void } | undefined
    client.on('notification', message => {
      const payload = message.payload ?? ''
      if (!payload.startsWith(PROBE_PREFIX)) { handlers.onNotification(payload); return }
      if (payload === awaiting?.payload) awaiting.heard()
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
    } catch (error) {
      report(false, 'disconnected')
      firstAttempt()
      drop(client)
      await end(client)
      throw error
    }
    let deaf = false
    const nextBeat = async (): Promise<void> => { await Promise.race([sleep(heartbeatMs, closing.signal), ended]) }
    const heartbeat = (async () => {
      while (!closing.signal.aborted && !connection.over) {
        if (handlers.probing?.() === false) {
          await nextBeat()
          continue
        }
        const payload = `${prefix}${++sent}`
        let heard = false
        const echo = new Promise<void>(resolve => { awaiting = { payload, heard: () => { heard = true; resolve() } } })
        const delivered = await Promise.race([probe(payload).then(() => true, () => false), closed])
        if (closing.signal.aborted) return
        if (!delivered) {
          // Nothing learnt about the listener (the primary unreachable, its pool saturated):
          // the state stands, and the connection is checked the plain way. Turning the cache
          // off here would add a lookup per request to a primary that is already short.
          awaiting = undefined
          firstAttempt()
          await client.query('SELECT 1').catch(() => { drop(client) })
          await nextBeat()
          continue
        }
        await Promise.race([echo, sleep(timeoutMs, closing.signal), ended])
        awaiting = undefined
        if (closing.signal.aborted || connection.over) return
        if (!heard) {
          deaf = true
          report(false, 'no_echo')
          firstAttempt()
          drop(client)
          return
        }
        report(true)
        firstAttempt()
        await nextBeat()
      }
    })()
    await ended
    await heartbeat
    report(false, deaf ? 'no_echo' : 'disconnected')
    // Not heard: retried like a failed connection, with a growing delay.
    if (deaf) throw new Deaf()
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
