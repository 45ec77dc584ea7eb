import type { DeafReason } from '../db/hearing.js'
import type { Caller } from './caller.js'

/** A caller as loaded, with what decides whether its key is still good. */
export interface LoadedCaller extends Caller {
  lastUsedAt: Date | null
  expiresAt: Date | null
}

/** The channel the migration `caller_change_notifications` notifies on. */
export const CALLER_CHANGED = 'caller_changed'

interface Entry { caller: LoadedCaller, loadedAt: number }

/**
 * Why the cache is off: AUTH_CACHE_TTL_MS=0 (`disabled`), changes not heard yet (`starting`),
 * or no longer known to be heard (the listener's reason).
 */
export type CacheOffReason = 'disabled' | 'starting' | DeafReason

/** Every reason, for metrics whose series should not come and go. */
export const CACHE_OFF_REASONS: readonly CacheOffReason[] = ['disabled', 'starting', 'disconnected', 'no_echo', 'no_probe']

/**
 * Callers by key hash, so that an authenticated request costs no query. Correctness rests on
 * invalidation, not on the time bound: every change to a key, user or organization clears
 * the whole cache (changes are rare; a notification per statement, from triggers), and
 * nothing is cached or served from here unless the listener has shown, within a deadline,
 * that it hears (heard()): past the deadline the cache is off by the clock, whatever the
 * listener's timers are doing. What depends on the clock is checked on every use, never
 * cached: a key's expiry here, the subscription's period end in hasProAccess. `ttlMs` is
 * only the backstop.
 */
export class CallerCache {
  private readonly entries = new Map<string, Entry>()
  private generation = 0
  /** Until when (performance.now()'s clock) changes are known to be heard. */
  private heardUntil = -Infinity
  private heardOnce = false
  private deafReason: DeafReason | undefined
  readonly stats = { hits: 0, misses: 0, invalidations: 0 }

  constructor (private readonly ttlMs: number, private readonly maxEntries = 10_000) {}

  get enabled (): boolean { return this.ttlMs > 0 && performance.now() < this.heardUntil }

  /** Null while on. */
  get offReason (): CacheOffReason | null {
    if (this.ttlMs === 0) return 'disabled'
    if (this.enabled) return null
    return this.deafReason ?? (this.heardOnce ? 'no_probe' : 'starting')
  }

  get (key: string, now: number): LoadedCaller | undefined {
    const entry = this.enabled ? this.entries.get(key) : undefined
    const expiresAt = entry?.caller.expiresAt?.getTime() ?? Infinity
    if (entry === undefined || now - entry.loadedAt >= this.ttlMs || expiresAt <= now) {
      if (entry !== undefined) this.entries.delete(key)
      this.stats.misses++
      return undefined
    }
    this.stats.hits++
    return entry.caller
  }

  /** Taken before a lookup and handed to set(): a lookup overtaken by a change is not kept. */
  version (): number { return this.generation }

  set (key: string, caller: LoadedCaller, version: number, now: number): void {
    if (!this.enabled || version !== this.generation) return
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(key, { caller, loadedAt: now })
  }

  invalidate (): void {
    this.generation++
    this.entries.clear()
    this.stats.invalidations++
  }

  /**
   * Every change committed before some moment has been heard; trust that until `until`
   * (performance.now()'s clock). After a stretch when it was not known, what was cached
   * before may have missed a change: it is dropped.
   */
  heard (until: number): void {
    if (!this.enabled) this.invalidate()
    this.heardUntil = Math.max(this.heardUntil, until)
    this.heardOnce = true
    this.deafReason = undefined
  }

  /** Changes are not known to be heard from now on (why): off, and what was cached is dropped. */
  deaf (reason: DeafReason): void {
    this.invalidate()
    this.heardUntil = -Infinity
    this.deafReason = reason
  }
}
