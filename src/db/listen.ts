import { randomUUID } from 'node:crypto'
import { setTimeout as wait } from 'node:timers/promises'
import pg from 'pg'
import { Hearing, type HearingHandlers } from './hearing.js'

// LISTEN/NOTIFY, which Prisma does not offer: on a server, a connection of its own (a pooled
// one may be handed to another query, and LISTEN belongs to a session); on the embedded
// database, PGlite's own listen().

export interface ListenHandlers extends HearingHandlers {
  onNotification: (payload: string) => void
  /**
   * False while no probe should be sent (the instance is stopping: a probe it sent then would
   * hold the pool's close for its timeout). LISTEN goes on; with no probe, the last proof
   * lapses as it would otherwise.
   */
  probing?: () => boolean
}

export interface Subscription { close: () => Promise<void> }

export interface ListenOptions {
  /** Bound on connecting and on a probe's whole round trip. */
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

/**
 * How long a probe that came back vouches for the listener, from the moment it was sent: the
 * next probe goes heartbeatMs later and has timeoutMs to come back. A change committed after
 * the last probe that came back was sent, and not heard, is served from a cache for less
 * than this: 7 s with the defaults (HEARTBEAT_MS + DB_CONNECTION_TIMEOUT_MS).
 */
export const proofLifetimeMs = (timeoutMs: number, heartbeatMs = HEARTBEAT_MS): number => heartbeatMs + timeoutMs

/** Payloads of the listener's own probes: never a table name, which the triggers send. */
export const PROBE_PREFIX = 'listener-probe:'

const sleep = async (ms: number, signal?: AbortSignal): Promise<void> => { await wait(Math.max(0, ms), undefined, { ref: false, ...(signal !== undefined ? { signal } : {}) }).catch(() => {}) }

class Deaf extends Error {}

/**
 * Listens on `channel` until closed, reconnecting with a growing delay. Listening is proved,
 * not assumed, and the proof has a deadline: every `heartbeatMs`, a probe is notified on the
 * channel through the application's own connections (`probe`), and one that comes back on
 * the listening connection shows that everything committed before it was sent has been
 * heard (PostgreSQL delivers notifications in commit order). Each proof is good for
 * proofLifetimeMs from that probe's sending (onHeard), whether the next probe comes back,
 * never comes back, cannot be sent or is still waiting for a connection: when it lapses the
 * state is false ('no_echo' if the last probe was sent and not heard, 'no_probe' if it could
 * not be sent in time). So a change that is not heard is served from a cache for less than
 * proofLifetimeMs, whatever stopped it. A probe that was sent and did not come back within
 * `timeoutMs` also drops the connection (a frozen server, a dropped route, a session that
 * lost its LISTEN) for a new one; one that could not be sent has the connection checked with
 * `SELECT 1`. A probe that comes back late still counts, from when it was sent. Probes, this
 * instance's and other instances', are not passed to onNotification. Resolves once the first
 * attempt has been heard or failed (within 2 × timeoutMs, plus a pool's wait).
 */
export async function listenOnServer (url: string, channel: string, handlers: ListenHandlers, options: ListenOptions): Promise<Subscription> {
  const { timeoutMs, probe } = options
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS
  const lifetimeMs = proofLifetimeMs(timeoutMs, heartbeatMs)
  const closing = new AbortController()
  // Raced with a probe: a close does not wait for one (on a frozen database, its timeout).
  const closed = new Promise<false>(resolve => { closing.signal.addEventListener('abort', () => { resolve(false) }, { once: true }) })
  const prefix = `${PROBE_PREFIX}${randomUUID()}:`
  const hearing = new Hearing(handlers, lifetimeMs)
  let wake: (() => void) | undefined
  let firstAttempt: () => void = () => {}
  const attempted = new Promise<void>(resolve => { firstAttempt = resolve })
  let current: pg.Client | undefined
  const drop = (client: pg.Client): void => { (client as unknown as { connection?: { stream?: { destroy: () => void } } }).connection?.stream?.destroy() }
  // end() waits for the server's goodbye, which a frozen server never sends.
  const end = async (client: pg.Client): Promise<void> => { await Promise.race([client.end().catch(() => {}), sleep(timeoutMs)]) }

  async function session (): Promise<void> {
    const client = new pg.Client({ connectionString: url, application_name: 'screening-read-api:listen', connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, keepAlive: true })
    // An object, not a variable: set by the 'end' event while the heartbeat loops.
    const connection = { over: false }
    let deaf = false
    // Nothing is heard from here on: false at once, not at the proof's deadline.
    const ended = new Promise<void>(resolve => { client.once('end', () => { connection.over = true; hearing.report(false, deaf ? 'no_echo' : 'disconnected'); resolve() }) })
    client.on('error', () => { drop(client) })
    current = client
    client.on('notification', message => {
      const payload = message.payload ?? ''
      if (!payload.startsWith(PROBE_PREFIX)) { handlers.onNotification(payload); return }
      if (!payload.startsWith(prefix)) return // another instance's
      if (hearing.heard(Number(payload.slice(prefix.length)))) wake?.()
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
    } catch (error) {
      hearing.report(false, 'disconnected')
      firstAttempt()
      drop(client)
      await end(client)
      throw error
    }
    const until = async (at: number): Promise<void> => { await Promise.race([sleep(at - performance.now(), closing.signal), ended]) }
    const heartbeat = (async () => {
      let nextAt = performance.now()
      while (!closing.signal.aborted && !connection.over) {
        await until(nextAt)
        if (closing.signal.aborted || connection.over) return
        const startedAt = performance.now()
        // Probes go every heartbeatMs from the last one sent, however long that one took.
        nextAt = startedAt + heartbeatMs
        hearing.delivered = false
        if (handlers.probing?.() === false) continue
        const n = hearing.send(startedAt)
        // A probe still under way when the connection ends is not waited for: its echo, if
        // the next connection hears it, still counts from when it was sent.
        const sending = await Promise.race([probe(`${prefix}${n}`).then(() => true, () => false), closed, ended.then(() => false)])
        if (closing.signal.aborted || connection.over) return
        if (!sending) {
          // Nothing learnt about the listener (the primary unreachable, its pool saturated):
          // the last proof lapses at its deadline all the same. The connection is checked
          // the plain way.
          firstAttempt()
          await client.query('SELECT 1').catch(() => { drop(client) })
          continue
        }
        hearing.delivered = true
        // Usually back before pg_notify's own answer; otherwise within timeoutMs.
        const echoBy = performance.now() + timeoutMs
        while (!hearing.heardSince(n) && performance.now() < echoBy && !closing.signal.aborted && !connection.over) {
          await Promise.race([new Promise<void>(resolve => { wake = resolve }), sleep(echoBy - performance.now(), closing.signal), ended])
          wake = undefined
        }
        if (closing.signal.aborted || connection.over) return
        if (!hearing.heardSince(n)) {
          deaf = true
          hearing.report(false, 'no_echo')
          firstAttempt()
          drop(client)
          return
        }
        firstAttempt()
      }
    })()
    await ended
    await heartbeat
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
      hearing.close()
      if (current !== undefined) { await end(current); drop(current) }
      await loop
    },
  }
}
