import { Type } from '@sinclair/typebox'
import { sql } from '../db/sql.js'
import type { SqlReader } from '../db/sql-reader.js'
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
export async function storeZoneRules (db: SqlReader, rules: ZoneRules): Promise<void> {
  if (await keepZoneRules(db, rules.id)) return
  const loaded = await loadZoneRules(db, rules.text)
  if (loaded !== rules.id) throw new Error(`zone rules ${rules.id}: the database filed them as ${loaded}`)
}

const KeptRow = Type.Object({ kept: Type.Boolean() })

/** Marks the set in use; false when the database has no set of that id. */
export async function keepZoneRules (db: SqlReader, id: string): Promise<boolean> {
  const [kept] = await db.rows(KeptRow, sql`SELECT keep_zone_rules(${id}) AS kept`)
  return kept?.kept === true
}

const LoadedRow = Type.Object({ id: Type.String() })

/** Loads a set of rules (tzdata's zic output): the id the database filed it under. */
export async function loadZoneRules (db: SqlReader, text: string): Promise<string | undefined> {
  const [loaded] = await db.rows(LoadedRow, sql`SELECT load_zone_rules(${text}) AS id`)
  return loaded?.id
}

/**
 * The rules an app answers with, stored once per app: `ready()` resolves when they are in the
 * database. A failure (the database unreachable at start) is not kept: the next call tries
 * again, so a request is answered as soon as the database is back.
 */
export class ZoneRulesStore {
  private stored: Promise<void> | undefined

  constructor (private readonly db: SqlReader, readonly rules: ZoneRules) {}

  async ready (): Promise<void> {
    this.stored ??= storeZoneRules(this.db, this.rules).catch((error: unknown) => {
      this.stored = undefined
      throw error
    })
    await this.stored
  }

  /** After a statement found no rules where they were stored (deleted since): store them again. */
  forget (): void { this.stored = undefined }

  /** Marks the rules in use (storing them again if they were deleted), on the upkeep's timer. */
  async keep (): Promise<void> {
    await storeZoneRules(this.db, this.rules)
    this.stored = Promise.resolve()
  }
}
