import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ZoneRulesStore } from '../zones/store.js'
import { runPeriodically } from './periodic.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The zone rules analytics answers with: `ready()` once they are stored (tests wait on it before counting statements). */
    zoneRules: ZoneRulesStore
  }
}

// Each zone rule set is about 3 MB, one per tzdata release an instance ran with. Every
// instance marks its own in use at start and on this timer; a set no instance has marked for
// a day is deleted (keep_zone_rules, migration 20261127120000_zone_rule_sets_pruned).
export const ZONE_RULES_KEEP_INTERVAL_MS = 10 * 60_000

export default fp(async function zoneRulesUpkeepPlugin (app: FastifyInstance, { store }: { store: ZoneRulesStore }) {
  app.decorate('zoneRules', store)
  runPeriodically(app, 'marking the zone rules in use', ZONE_RULES_KEEP_INTERVAL_MS, async () => { await store.keep() })
}, { name: 'zone-rules-upkeep', dependencies: ['database', 'draining'] })
