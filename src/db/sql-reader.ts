import type { ArgType, SqlQueryable, SqlResultSet } from '@prisma/driver-adapter-utils'
import { ColumnTypeEnum } from '@prisma/driver-adapter-utils'
import type { Static, TSchema } from '@sinclair/typebox'
import type { PrismaClient } from '../generated/prisma/client.js'
import type { Sql } from './sql.js'

/**
 * Where the request statements are sent: one raw statement in, its rows out, typed as
 * Prisma's `$queryRaw` types them (timestamps as Date, JSON parsed, integers as numbers).
 * Each statement names its row's schema (db/row-schemas.ts), from which the rows' TypeScript
 * type comes: `test/db/row-types.test.ts` describes every statement on the database and fails
 * when a schema disagrees with the columns PostgreSQL says it returns. Not checked at run
 * time: the schema costs a request nothing.
 */
export interface SqlReader {
  rows: <S extends TSchema>(row: S, query: Sql) => Promise<Array<Static<S>>>
}

/** Statements that write, one at a time, on the primary: the count of rows they changed. */
export interface SqlWriter {
  execute: (query: Sql) => Promise<number>
}

/** Through Prisma's client (`$queryRaw`): for tools and tests that hold a client. */
export const clientReader = (prisma: Pick<PrismaClient, '$queryRaw' | '$executeRaw'>): SqlReader & SqlWriter => ({
  rows: async <S extends TSchema>(_row: S, query: Sql) => await prisma.$queryRaw<Array<Static<S>>>(query),
  execute: async (query: Sql) => await prisma.$executeRaw(query),
})

/**
 * Through Prisma's driver adapter alone, the pool and named statements the client uses: the
 * API's reads, which are all raw SQL. The client's own path for a raw statement (its query
 * interpreter, serializing the adapter's result and deserializing it again) cost a small get
 * job about twice what the adapter does, more than the statement's whole round trip
 * (docs/performance.md, "Prisma's client on the read path"). Errors keep the client's shape
 * (`meta.driverAdapterError`), which the checks for an unavailable database and a replica
 * that failed read.
 */
export function adapterReader (connect: () => Promise<SqlQueryable>): SqlReader & SqlWriter {
  // Never disposed here: with an external pool, the adapter's dispose() ends the pool that
  // the client shares (closing the database closes it).
  let adapter: Promise<SqlQueryable> | undefined
  return {
    rows: async <S extends TSchema>(_row: S, query: Sql): Promise<Array<Static<S>>> => {
      adapter ??= connect().catch((error: unknown) => {
        adapter = undefined
        throw error
      })
      const values = query.values
      let result: SqlResultSet
      try {
        result = await (await adapter).queryRaw({ sql: query.text, args: values, argTypes: values.map(argType) })
      } catch (error) {
        throw new DatabaseError(error)
      }
      return typedRows(result) as Array<Static<S>>
    },
    execute: async (query: Sql): Promise<number> => {
      adapter ??= connect().catch((error: unknown) => {
        adapter = undefined
        throw error
      })
      const values = query.values
      try {
        return await (await adapter).executeRaw({ sql: query.text, args: values, argTypes: values.map(argType) })
      } catch (error) {
        throw new DatabaseError(error)
      }
    },
  }
}

/** A driver adapter's error, as Prisma's client reports it, with PostgreSQL's message. */
export class DatabaseError extends Error {
  readonly meta: { driverAdapterError: unknown }
  constructor (driverAdapterError: unknown) {
    const cause = (driverAdapterError as { cause?: { message?: string, originalMessage?: string } })?.cause
    super(cause?.originalMessage ?? cause?.message ?? (driverAdapterError as Error)?.message ?? 'database error', { cause: driverAdapterError })
    this.name = 'DatabaseError'
    this.meta = { driverAdapterError }
  }
}

// The adapters format a Date parameter as a timestamp whatever its type; the statements send
// strings, numbers, null and Dates only.
const argType = (value: unknown): ArgType =>
  value instanceof Date ? { scalarType: 'datetime', arity: 'scalar' } : { scalarType: 'unknown', arity: 'scalar' }

function typedRows ({ columnNames, columnTypes, rows }: SqlResultSet): Array<Record<string, unknown>> {
  const convert = columnTypes.map((type, i) => converter(type, columnNames[i]!))
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

/**
 * As the client's raw deserialization, for the types the API's statements return. Any other
 * type is refused, so that a statement returning one (a numeric, an array) fails its tests
 * instead of answering a value the client would have typed otherwise.
 */
function converter (type: number, column: string): (value: unknown) => unknown {
  switch (type) {
    case ColumnTypeEnum.Text:
    case ColumnTypeEnum.Character:
    case ColumnTypeEnum.Uuid:
    case ColumnTypeEnum.Enum:
      return same
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
    case ColumnTypeEnum.Bytes:
      // Both adapters parse bytea (pg: a Buffer; PGlite's: a Uint8Array); the client answers a Uint8Array.
      return value => value instanceof Uint8Array ? value : refuse(column, type)
    default:
      return refuse(column, type)
  }
}

function refuse (column: string, type: number): never {
  throw new TypeError(`sql-reader.ts has no conversion for column "${column}" (driver adapter column type ${type}): cast it in the statement or add one`)
}
