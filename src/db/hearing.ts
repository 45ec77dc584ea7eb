// Whether a listener hears, as listenOnServer proves it (listen.ts): a probe it notified that
// came back shows that everything committed before the probe was sent has been heard
// (PostgreSQL delivers notifications in commit order). Each proof is good for a while from
// that probe's sending, whatever becomes of the next probe; this keeps the probes and the
// deadline, and tells the handlers when the state changes.

/**
 * Why notifications are not known to be heard: no listening connection; one that is connected
 * and answers but does not receive what is notified (a transaction-mode pooler, which runs
 * the LISTEN on a server connection it then hands to other clients; a listener pointed at
 * another database than the one written to); or no probe sent and come back within the bound
 * (the application's path to the primary down or saturated, or the instance stopping), so
 * that nothing shows the listener hears.
 */
export type DeafReason = 'disconnected' | 'no_echo' | 'no_probe'

/** What a listener's user is told of its hearing. */
export interface HearingHandlers {
  /**
   * Every notification committed before a moment has been heard, so what is cached may be
   * trusted until `until` (performance.now()'s clock; Infinity: for as long as the
   * subscription lasts). Called at each probe that comes back, with a later `until` each time.
   */
  onHeard: (until: number) => void
  /**
   * Changes of state only, for logs: true from the first proof after a stretch without one,
   * false (with why) when the last proof has lapsed or the connection is known not to hear.
   * Until `until` has passed, false can come early, never late.
   */
  onState: (listening: boolean, reason?: DeafReason) => void
}

export class Hearing {
  /** When each probe not yet superseded was sent, by number. */
  private readonly sentAt = new Map<number, number>()
  private sent = 0
  /** The newest probe heard back. */
  private heardN = 0
  /** Whether the probe under way reached the database (its pg_notify returned). */
  delivered = false
  private hearing = false
  private lastReason: DeafReason | undefined
  private provenUntil = -Infinity
  private lapse: NodeJS.Timeout | undefined
  private closed = false

  constructor (private readonly handlers: HearingHandlers, private readonly lifetimeMs: number) {}

  /** Changes of state only reach onState; not knowing to hear ends the current proof. */
  report (listening: boolean, reason?: DeafReason): void {
    if (this.closed) return
    if (!listening) {
      this.provenUntil = -Infinity
      clearTimeout(this.lapse)
    }
    if (listening === this.hearing && reason === this.lastReason) return
    this.hearing = listening
    this.lastReason = reason
    this.handlers.onState(listening, reason)
  }

  /** A probe is sent now: its number. One sent longer ago than a proof lasts could prove nothing now. */
  send (now: number): number {
    for (const [k, at] of this.sentAt) if (at + this.lifetimeMs <= now) this.sentAt.delete(k)
    const n = ++this.sent
    this.sentAt.set(n, now)
    return n
  }

  /** Probe `n` came back (this instance's, on the listening connection); false when an older one. */
  heard (n: number): boolean {
    if (n <= this.heardN) return false
    this.heardN = n
    this.proven(n)
    return true
  }

  /** Whether probe `n`, or a later one, came back. */
  heardSince (n: number): boolean { return this.heardN >= n }

  close (): void {
    this.closed = true
    clearTimeout(this.lapse)
  }

  private proven (n: number): void {
    const until = (this.sentAt.get(n) ?? -Infinity) + this.lifetimeMs
    for (const k of this.sentAt.keys()) if (k <= n) this.sentAt.delete(k)
    // A proof that has already lapsed (a probe heard very late) shows nothing about now.
    if (until <= this.provenUntil || until <= performance.now() || this.closed) return
    this.provenUntil = until
    this.handlers.onHeard(until)
    this.report(true)
    this.watchLapse()
  }

  // The state turns false when the last proof lapses, whatever the probe under way is doing.
  private watchLapse (): void {
    clearTimeout(this.lapse)
    this.lapse = setTimeout(() => {
      if (performance.now() >= this.provenUntil) this.report(false, this.delivered ? 'no_echo' : 'no_probe')
      else this.watchLapse() // the timer's clock is a little behind performance.now()'s
    }, Math.max(1, this.provenUntil - performance.now()))
    this.lapse.unref()
  }
}
