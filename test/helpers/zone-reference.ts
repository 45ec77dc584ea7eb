import { readFileSync } from 'node:fs'
import { DayOfWeek, Instant, LocalDateTime, TemporalAdjusters, ZoneRulesProvider } from '@js-joda/core'
import '@js-joda/timezone/dist/js-joda-timezone-empty.js'
import { PACKAGED_RULES_FILE } from '../../src/zones/rules.js'

// The reference for analytics' weeks: the Monday of a completion's local date, computed by
// js-joda (@js-joda/core's date arithmetic, @js-joda/timezone's reading of the zone data),
// from the same data file as the service, so the same tzdata release. Independent of the
// service's code (its transitions, the database's lookups and week arithmetic) and of
// PostgreSQL's and the runtime's tzdata: none of them is asked.

type JodaProvider = typeof ZoneRulesProvider & { loadTzdbData: (packed: unknown) => void, getTzdbData: () => { version: string } }
const provider = ZoneRulesProvider as JodaProvider
let loadedFile: string | undefined

function load (file: string): void {
  if (loadedFile === file) return
  provider.loadTzdbData(JSON.parse(readFileSync(file, 'utf8')))
  loadedFile = file
}

export interface ZoneReference {
  /** The tzdata release of the data read. */
  version: string
  /** The Monday (`YYYY-MM-DD`) of the local week of the instant `ms`, in `zone` (any name of the data, links too). */
  mondayOf: (ms: number, zone: string) => string
}

/** A reference reading `file` (default: the service's pinned rules). */
export function zoneReference (file: string = PACKAGED_RULES_FILE): ZoneReference {
  load(file)
  const version = provider.getTzdbData().version
  const rulesOf = new Map<string, ReturnType<typeof ZoneRulesProvider.getRules>>()
  return {
    version,
    mondayOf: (ms, zone) => {
      load(file)
      let rules = rulesOf.get(zone)
      if (rules === undefined) rulesOf.set(zone, rules = ZoneRulesProvider.getRules(zone))
      const instant = Instant.ofEpochMilli(ms)
      const local = LocalDateTime.ofInstant(instant, rules.offset(instant))
      return local.toLocalDate().with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY)).toString()
    },
  }
}
