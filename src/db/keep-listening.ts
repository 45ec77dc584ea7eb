import { setTimeout as wait } from 'node:timers/promises'
import pg from 'pg'
import type { Hearing } from './hearing.js'

// The connections of listenOnServer (listen.ts), one after another, and the probes that prove
// each one hears: what the subscription shares lives in a Listener, what one connection has
// in a Session.

/** Payloads of the listener's own probes: never a table name, which the triggers send. */
export const PROBE_PREFIX = 'listener-probe:'

const RETRY_MAX_MS = 5000

/** What the connections of one subscription share, from listenOnServer to its close. */
export interface Listener {
  url: string
  channel: string
  /** Bound on connecting, on a query and on a probe's whole round trip (ListenOptions). */
  timeoutMs: number
  heartbeatMs: number
  probe: (payload: string) => Promise<void>
  /** False while no probe should be sent (ListenHandlers.probing). */
  probing: () => boolean
  /** Every notification but the probes. */
  onNotification: (payload: string) => void
  /** This subscription's probes' payloads start with it, a probe's number after it. */
  prefix: string
  hearing: Hearing
  closing: AbortSignal
  /** False once closing: raced with a probe, so that a close does not wait for one (on a frozen database, its timeout). */
  closed: Promise<false>
  /** Set while the heartbeat waits for a probe's echo; the echo calls it, on whichever connection it comes. */
  wake: (() => void) | undefined
  /** Tells listenOnServer the first attempt has been heard or failed. */
  attempted: () => void
  /** The newest connection, for the close to end. */
  current: pg.Client | undefined
}

/** One connection: `over` is set by its 'end' event and `deaf` by the heartbeat, each read by the other. */
interface Session { client: pg.Client, over: boolean, deaf: boolean, ended: Promise<void> }

class Deaf extends Error {}

const sleep = async (ms: number, signal?: AbortSignal): Promise<void> => { await wait(Math.max(0, ms), undefined, { ref: false, ...(signal !== undefined ? { signal } : {}) }).catch(() => {}) }

const drop = (client: pg.Client): void => { (client as unknown as { connection?: { stream?: { destroy: () => void } } }).connection?.stream?.destroy() }

// end() waits for the server's goodbye, which a frozen server never sends.
const end = async (client: pg.Client, timeoutMs: number): Promise<void> => { await Promise.race([client.end().catch(() => {}), sleep(timeoutMs)]) }

const stopped = (l: Listener, s: Session): boolean => l.closing.aborted || s.over

/** Connections one after another until closed; a failed or deaf one is retried with a growing delay. */
export async function keepListening (l: Listener): Promise<void> {
  let delay = 100
  while (!l.closing.aborted) {
    await session(l).then(() => { delay = 100 }, () => { delay = Math.min(delay * 2, RETRY_MAX_MS) })
    await sleep(delay, l.closing)
  }
}

/** Ends the newest connection, for the close: not waiting for a frozen server's goodbye. */
export async function hangUp (l: Listener): Promise<void> {
  if (l.current !== undefined) { await end(l.current, l.timeoutMs); drop(l.current) }
}

/** One connection's life: LISTEN, then probes until it ends, is found deaf or the listener closes. */
async function session (l: Listener): Promise<void> {
  const s = openSession(l)
  try {
    await s.client.connect()
    await s.client.query(`LISTEN ${pg.escapeIdentifier(l.channel)}`)
  } catch (error) {
    l.hearing.report(false, 'disconnected')
    l.attempted()
    drop(s.client)
    await end(s.client, l.timeoutMs)
    throw error
  }
  const beating = heartbeat(l, s)
  await s.ended
  await beating
  // Not heard: retried like a failed connection, with a growing delay.
  if (s.deaf) throw new Deaf()
}

/** A client, not yet connected, with its events wired; the listener's newest. */
function openSession (l: Listener): Session {
  const client = new pg.Client({ connectionString: l.url, application_name: 'screening-read-api:listen', connectionTimeoutMillis: l.timeoutMs, query_timeout: l.timeoutMs, keepAlive: true })
  const flags = { over: false, deaf: false }
  // Nothing is heard from here on: false at once, not at the proof's deadline.
  const ended = new Promise<void>(resolve => { client.once('end', () => { flags.over = true; l.hearing.report(false, flags.deaf ? 'no_echo' : 'disconnected'); resolve() }) })
  client.on('error', () => { drop(client) })
  l.current = client
  client.on('notification', message => { hear(l, message.payload ?? '') })
  return Object.assign(flags, { client, ended })
}

/** A notification for onNotification, or a probe: this listener's wakes the heartbeat. */
function hear (l: Listener, payload: string): void {
  if (!payload.startsWith(PROBE_PREFIX)) { l.onNotification(payload); return }
  if (!payload.startsWith(l.prefix)) return // another instance's
  if (l.hearing.heard(Number(payload.slice(l.prefix.length)))) l.wake?.()
}

/** A probe every heartbeatMs from the last one sent, however long that one took. */
async function heartbeat (l: Listener, s: Session): Promise<void> {
  let nextAt = performance.now()
  while (!stopped(l, s)) {
    await Promise.race([sleep(nextAt - performance.now(), l.closing), s.ended])
    if (stopped(l, s)) return
    const startedAt = performance.now()
    nextAt = startedAt + l.heartbeatMs
    l.hearing.delivered = false
    if (!l.probing()) continue
    if (!await probeOnce(l, s, startedAt)) return
  }
}

/** Sends a probe and waits for its echo: false when the heartbeat is to stop (closing, the connection over, or deaf). */
async function probeOnce (l: Listener, s: Session, startedAt: number): Promise<boolean> {
  const { probe } = l
  const n = l.hearing.send(startedAt)
  // A probe still under way when the connection ends is not waited for: its echo, if
  // the next connection hears it, still counts from when it was sent.
  const sending = await Promise.race([probe(`${l.prefix}${n}`).then(() => true, () => false), l.closed, s.ended.then(() => false)])
  if (stopped(l, s)) return false
  if (!sending) {
    // Nothing learnt about the listener (the primary unreachable, its pool saturated): the
    // last proof lapses at its deadline all the same. The connection is checked the plain way.
    l.attempted()
    await s.client.query('SELECT 1').catch(() => { drop(s.client) })
    return true
  }
  l.hearing.delivered = true
  await echo(l, s, n)
  if (stopped(l, s)) return false
  if (!l.hearing.heardSince(n)) {
    s.deaf = true
    l.hearing.report(false, 'no_echo')
    l.attempted()
    drop(s.client)
    return false
  }
  l.attempted()
  return true
}

/** Until probe `n` (or a later one) is heard, for at most timeoutMs: usually back before pg_notify's own answer. */
async function echo (l: Listener, s: Session, n: number): Promise<void> {
  const echoBy = performance.now() + l.timeoutMs
  while (!l.hearing.heardSince(n) && performance.now() < echoBy && !stopped(l, s)) {
    await Promise.race([new Promise<void>(resolve => { l.wake = resolve }), sleep(echoBy - performance.now(), l.closing), s.ended])
    l.wake = undefined
  }
}
