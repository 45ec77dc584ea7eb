import type { ArgType, SqlQueryable, SqlResultSet } from '@prisma/driver-adapter-utils'
import { ColumnTypeEnum } from '@prisma/driver-adapter-utils'
import type { Prisma as PrismaSql } from '../generated/prisma/client.js'
import type { PrismaClient } from '../generated/prisma/client.js'

/**
 * Where the request statements are sent: one raw statement in, its rows out, typed as
 * Prisma's `$queryRaw` types them (timestamps as Date, JSON parsed, integers as numbers).
 */
export interface SqlReader {
  /** `T`: the rows' array type, as `$queryRaw<T>`'s. */
  rows: <T extends unknown[]>(query: PrismaSql.Sql) => Promise<T>
}

/** Through Prisma's client (`$queryRaw`): for tools and tests that hold a client. */
export const clientReader = (prisma: PrismaClient): SqlReader => ({
  rows: async <T extends unknown[]>(query: PrismaSql.Sql) => await prisma.$queryRaw<T>(query),
})

/**
 * Through Prisma's driver adapter alone, the pool and named statements the client uses: the
 * API's reads, which are all raw SQL. The client's own path for a raw statement (its query
 * interpreter, serializing the adapter's result and deserializing it again) cost a small get
 * job about twice what the adapter does, more than the statement's whole round trip
 * (docs/performance.md, "Prisma's client on the read path"). Errors keep the client's shape
 * (`meta.driverAdapterError`), which the checks for an unavailable database, a replica that
 * failed and an unknown time zone read.
 */
export function adapterReader (connect: () => Promise<SqlQueryable>): SqlReader {
  let adapter: Promise<SqlQueryable> | undefined
  return {
    rows: async <T extends unknown[]>(query: PrismaSql.Sql): Promise<T> => {
      adapter ??= connect()
      const values = query.values
      let result: SqlResultSet
      try {
        result = await (await adapter).queryRaw({ sql: query.text, args: values, argTypes: values.map(argType) })
      } catch (error) {
        throw new DatabaseError(error)
      }
      return typedRows(result) as T
    },
  }
}

/** A driver adapter's error, as Prisma's client reports it. */
export class DatabaseError extends Error {
  readonly meta: { driverAdapterError: unknown }
  constructor (driverAdapterError: unknown) {
    const cause = (driverAdapterError as { cause?: { message?: string } })?.cause
    super(cause?.message ?? (driverAdapterError as Error)?.message ?? 'database error')
    this.name = 'DatabaseError'
    this.meta = { driverAdapterError }
  }
}

// Only what the adapters convert by type: a Date parameter is written as a timestamp.
const argType = (value: unknown): ArgType =>
  value instanceof Date ? { scalarType: 'datetime', arity: 'scalar' } : { scalarType: 'unknown', arity: 'scalar' }

function typedRows ({ columnNames, columnTypes, rows }: SqlResultSet): Array<Record<string, unknown>> {
  const convert = columnTypes.map(converter)
  return rows.map(row => {
    const object: Record<string, unknown> = {}
    for (let i = 0; i < columnNames.length; i++) {
      const value = row[i]
      object[columnNames[i]!] = value === null || value === undefined ? null : convert[i]!(value)
    }
    return object
  })
}

const same = (value: unknown): unknown => value
const asNumber = (value: unknown): unknown => typeof value === 'number' ? value : Number(value)

/** As the client's raw deserialization: the types the API's statements return, and the rest as given. */
function converter (type: number): (value: unknown) => unknown {
  switch (type) {
    case ColumnTypeEnum.Int32:
    case ColumnTypeEnum.Float:
    case ColumnTypeEnum.Double:
      return asNumber
    case ColumnTypeEnum.Int64:
      return value => BigInt(value as string | number | bigint)
    case ColumnTypeEnum.DateTime:
      return value => value instanceof Date ? value : new Date(value as string)
    case ColumnTypeEnum.Json:
      return value => typeof value === 'string' ? JSON.parse(value) : value
    case ColumnTypeEnum.Boolean:
      return value => typeof value === 'boolean' ? value : value === 't' || value === 'true'
    default:
      return same
  }
}
