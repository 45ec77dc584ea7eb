import type { Prisma } from '../db/database.js'
import type { ZoneRules } from './rules.js'

// The zone rules in the database, where analytics' statements read them (zone_rules, keyed by
// the set's id). The migrate step loads the release's rules as the owner; an instance loads
// its own if they are missing (another ZONE_RULES_FILE, an embedded database), through
// load_zone_rules(), which the API's role may call. Loading is idempotent, and the id is the
// database's own hash of what it stored.

/**
 * Loads `rules` into the database unless they are there, and marks them in use (one statement
 * when they are there): keep_zone_rules() also deletes the sets no instance has marked for a
 * day (migration 20261127120000_zone_rule_sets_pruned).
 */
export async function storeZoneRules (prisma: Prisma, rules: ZoneRules): Promise<void> {
  const [kept] = await prisma.$queryRaw<Array<{ kept: boolean }>>`SELECT keep_zone_rules(${rules.id}) AS kept`
  if (kept?.kept === true) return
  const [loaded] = await prisma.$queryRaw<Array<{ id: string }>>`SELECT load_zone_rules(${rules.text}) AS id`
  if (loaded?.id !== rules.id) throw new Error(`zone rules ${rules.id}: the database filed them as ${loaded?.id}`)
}

/**
 * The rules an app answers with, stored once per app: `ready()` resolves when they are in the
 * database. A failure (the database unreachable at start) is not kept: the next call tries
 * again, so a request is answered as soon as the database is back.
 */
export class ZoneRulesStore {
  private stored: Promise<void> | undefined

  constructor (private readonly prisma: Prisma, readonly rules: ZoneRules) {}

  async ready (): Promise<void> {
    this.stored ??= storeZoneRules(this.prisma, this.rules).catch((error: unknown) => {
      this.stored = undefined
      throw error
    })
    await this.stored
  }

  /** After a statement found no rules where they were stored (deleted since): store them again. */
  forget (): void { this.stored = undefined }

  /** Marks the rules in use (storing them again if they were deleted), on the upkeep's timer. */
  async keep (): Promise<void> {
    await storeZoneRules(this.prisma, this.rules)
    this.stored = Promise.resolve()
  }
}
