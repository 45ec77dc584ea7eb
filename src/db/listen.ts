import { randomUUID } from 'node:crypto'
import { Hearing, type HearingHandlers } from './hearing.js'
import { hangUp, keepListening, type Listener, PROBE_PREFIX } from './keep-listening.js'

// LISTEN/NOTIFY, which Prisma does not offer: on a server, a connection of its own (a pooled
// one may be handed to another query, and LISTEN belongs to a session); on the embedded
// database, PGlite's own listen(). The connections and their probes: keep-listening.ts.

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

/** Payloads of the listener's own probes (keep-listening.ts sends them). */
export { PROBE_PREFIX }

/**
 * How long a probe that came back vouches for the listener, from the moment it was sent: the
 * next probe goes heartbeatMs later and has timeoutMs to come back. A change committed after
 * the last probe that came back was sent, and not heard, is served from a cache for less
 * than this: 7 s with the defaults (HEARTBEAT_MS + DB_CONNECTION_TIMEOUT_MS).
 */
export const proofLifetimeMs = (timeoutMs: number, heartbeatMs = HEARTBEAT_MS): number => heartbeatMs + timeoutMs

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
  const closing = new AbortController()
  let attempted: () => void = () => {}
  const firstAttempt = new Promise<void>(resolve => { attempted = resolve })
  const listener: Listener = {
    url,
    channel,
    timeoutMs,
    heartbeatMs,
    probe,
    probing: () => handlers.probing?.() !== false,
    onNotification: payload => { handlers.onNotification(payload) },
    prefix: `${PROBE_PREFIX}${randomUUID()}:`,
    hearing: new Hearing(handlers, proofLifetimeMs(timeoutMs, heartbeatMs)),
    closing: closing.signal,
    closed: new Promise<false>(resolve => { closing.signal.addEventListener('abort', () => { resolve(false) }, { once: true }) }),
    wake: undefined,
    attempted,
    current: undefined,
  }
  const loop = keepListening(listener)
  await firstAttempt
  return {
    close: async () => {
      closing.abort()
      listener.hearing.close()
      await hangUp(listener)
      await loop
    },
  }
}
