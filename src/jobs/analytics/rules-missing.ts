import type { FastifyBaseLogger } from 'fastify'
import { databaseUnavailable } from '../../errors.js'
import type { ZoneRulesStore } from '../../zones/store.js'
import { ZoneRulesMissing } from './read.js'

/**
 * A catch for an analytics read: rules missing from the primary, which had them (deleted
 * since), are a 503, and stored again by the next request; any other error is thrown on.
 */
export function rulesMissingAs503 (zoneRules: ZoneRulesStore, log: FastifyBaseLogger): (error: unknown) => never {
  return error => {
    if (!(error instanceof ZoneRulesMissing)) throw error
    log.error({ err: error }, 'zone rules missing from the primary')
    zoneRules.forget()
    throw databaseUnavailable()
  }
}
