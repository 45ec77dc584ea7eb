import type { ZoneRulesRef } from '../../src/jobs/analytics/read.js'
import { zoneRules } from '../../src/zones/rules.js'

/** The repository's zone argument for a name, as the analytics route makes it: the service's rules, the zone the name stands for. */
export function inZone (name: string): { rules: ZoneRulesRef } {
  const rules = zoneRules()
  const zone = rules.zoneOf(name)
  if (zone === undefined) throw new Error(`${name} is no zone of tzdata ${rules.version}`)
  return { rules: { set: rules.id, zone } }
}
