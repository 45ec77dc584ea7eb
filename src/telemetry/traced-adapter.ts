import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, SqlQueryable, Transaction } from '@prisma/driver-adapter-utils'
import { tracing } from './tracing.js'

// A span for each SQL statement sent through Prisma's driver adapter (the client's and the raw
// reads' one path), named by what it does and to which tables, never by its text or values;
// only under another span, or the periodic tasks would make a trace each, every second.

const MEMO_MAX = 1000
// A name before `(` is a function's, not a table's (the lookahead).
const TABLE = /\b(?:FROM|JOIN|INTO|UPDATE)\s+(?:ONLY\s+|LATERAL\s+)?("?[a-z_][a-z0-9_$]*"?(?:\."?[a-z_][a-z0-9_$]*"?)?)(?![a-z0-9_$."(])/gi
const SKIP = new Set(['select', 'lateral'])
// A statement's span attributes, made once per statement text (the SDK copies them).
const attributesBySql = new Map<string, Record<string, string>>()

/** A statement's readable name (db.query.summary: its first keyword and the first tables it names), and the rest of its attributes. */
function statementAttributes (sql: string): Record<string, string> {
  let attributes = attributesBySql.get(sql)
  if (attributes !== undefined) return attributes
  const operation = /^\s*(?:\(\s*)*([a-z]+)/i.exec(sql)?.[1]?.toUpperCase() ?? 'SQL'
  const tables: string[] = []
  for (const [, name] of sql.matchAll(TABLE)) {
    const table = name!.replaceAll('"', '')
    if (!SKIP.has(table.toLowerCase()) && !tables.includes(table)) tables.push(table)
    if (tables.length === 3) break
  }
  attributes = { 'db.system.name': 'postgresql', 'db.query.summary': [operation, ...tables].join(' '), 'db.operation.name': operation }
  if (attributesBySql.size >= MEMO_MAX) attributesBySql.clear()
  attributesBySql.set(sql, attributes)
  return attributes
}

async function traced<T> (query: SqlQuery, run: () => Promise<T>, rows: (result: T) => number | undefined): Promise<T> {
  const t = tracing()
  if (t === undefined || t.api.trace.getSpan(t.api.context.active()) === undefined) return await run()
  const attributes = statementAttributes(query.sql)
  // A leaf: the statement runs in the caller's context (no context of its own to enter).
  const span = t.tracer.startSpan(attributes['db.query.summary']!, { kind: t.api.SpanKind.CLIENT, attributes })
  try {
    const result = await run()
    const count = rows(result)
    if (count !== undefined) span.setAttribute('db.response.returned_rows', count)
    return result
  } catch (error) {
    span.setStatus({ code: t.api.SpanStatusCode.ERROR, message: 'the statement failed' })
    throw error
  } finally {
    span.end()
  }
}

function tracedQueryable<Q extends SqlQueryable> (queryable: Q): Q {
  // Made once per connection: the engine reads these on every statement.
  const own: Record<PropertyKey, unknown> = {
    queryRaw: async (query: SqlQuery) => await traced(query, async () => await queryable.queryRaw(query), r => r.rows.length),
    // An affected-row count is not db.response.returned_rows: left out.
    executeRaw: async (query: SqlQuery) => await traced(query, async () => await queryable.executeRaw(query), () => undefined),
    startTransaction: async (...args: Parameters<SqlDriverAdapter['startTransaction']>): Promise<Transaction> =>
      tracedQueryable(await (queryable as unknown as SqlDriverAdapter).startTransaction(...args)),
  }
  const bound = new Map<PropertyKey, unknown>()
  return new Proxy(queryable, {
    get (target, property, receiver) {
      if (Object.hasOwn(own, property) && (property !== 'startTransaction' || 'startTransaction' in target)) return own[property]
      const value: unknown = Reflect.get(target, property, receiver)
      if (typeof value !== 'function') return value
      let fn = bound.get(property)
      if (fn === undefined) bound.set(property, fn = (value as (...a: unknown[]) => unknown).bind(target))
      return fn
    },
  })
}

/**
 * The factory, its connections' statements traced once tracing is on; `factory` itself,
 * untouched, while it is off (decided when the database opens: tracing starts before).
 */
export function tracedAdapterFactory<F extends SqlDriverAdapterFactory> (factory: F): F {
  if (tracing() === undefined) return factory
  return new Proxy(factory, {
    get (target, property, receiver) {
      if (property === 'connect') return async () => tracedQueryable(await target.connect())
      const value: unknown = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}
