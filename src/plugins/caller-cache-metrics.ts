import { Counter, Gauge, type Registry } from 'prom-client'
import { CACHE_OFF_REASONS, type CallerCache } from '../auth/caller-cache.js'

// The caller cache's figures of GET /metrics (metrics.ts): its tallies as counters, whether
// it is on and why not.

export function callerCacheMetrics (register: Registry, cache: Pick<CallerCache, 'stats' | 'enabled' | 'offReason'>): void {
  // Counters follow the cache's own tallies: each scrape adds what happened since the last.
  const cacheCounter = (name: string, help: string, read: () => number): void => {
    let seen = 0
    // eslint-disable-next-line no-new
    new Counter({
      name,
      help,
      registers: [register],
      collect () {
        const now = read()
        if (now > seen) this.inc(now - seen)
        seen = now
      },
    })
  }
  cacheCounter('caller_cache_hits_total', 'Requests whose caller came from the in-process cache.', () => cache.stats.hits)
  cacheCounter('caller_cache_misses_total', 'Requests whose caller was looked up on the primary.', () => cache.stats.misses)
  cacheCounter('caller_cache_invalidations_total', 'Times the whole cache was cleared by a change notification.', () => cache.stats.invalidations)
  // eslint-disable-next-line no-new
  new Gauge({
    name: 'caller_cache_enabled',
    help: '1 while the caller cache is on (its change listener hears its own probe notifications and AUTH_CACHE_TTL_MS > 0).',
    registers: [register],
    collect () { this.set(cache.enabled ? 1 : 0) },
  })
  // eslint-disable-next-line no-new
  new Gauge({
    name: 'caller_cache_off_reason',
    help: 'Why the caller cache is off: 1 on the current reason (disabled: AUTH_CACHE_TTL_MS=0; starting; disconnected: no listener connection; no_echo: connected but not hearing notifications; no_probe: no probe could be sent and come back within the bound, the primary unreachable or its pool saturated), all 0 while on.',
    labelNames: ['reason'] as const,
    registers: [register],
    collect () {
      const current = cache.offReason
      for (const reason of CACHE_OFF_REASONS) this.set({ reason }, current === reason ? 1 : 0)
    },
  })
}
