import { createHash } from 'node:crypto'

// Named statements are parsed and planned once per connection, then only bound and run:
// for the small, frequent reads of this API, planning costs as much as executing. The name
// is derived from the SQL text, so the same text always gets the same name; the service
// sends a few dozen distinct texts at most, so the memo and each connection's statement
// cache stay small.

const MEMO_MAX = 1000
const names = new Map<string, string>()

export function statementName (sql: string): string {
  let name = names.get(sql)
  if (name === undefined) {
    name = `s_${createHash('sha256').update(sql).digest('base64url').slice(0, 22)}`
    if (names.size >= MEMO_MAX) names.clear()
    names.set(sql, name)
  }
  return name
}
