import { raw, type Sql } from './sql.js'

/**
 * A page size as it is written into a statement's text (a list or sync page), only from a
 * checked integer: with a bound LIMIT the planner cannot cost a generic plan and re-plans
 * every execution (measured with auto_explain: a custom plan each time); written in, the
 * prepared statement keeps a generic plan. At most 101 texts, one per limit.
 */
export function pageSize (limit: number): Sql {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`)
  return raw(String(limit))
}
