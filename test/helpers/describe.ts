import { createRequire } from 'node:module'
import type { PGlite } from '@electric-sql/pglite'
import type pg from 'pg'

// What a statement returns, as PostgreSQL describes it without running it: the extended
// protocol's Parse + Describe (statement) + Sync, on the unnamed statement. The server answers
// the parameters' types and, per column, its name, type, and the table column it comes from
// when it is a plain one. The same on a PostgreSQL server (node-postgres, through a query
// object of our own on its connection) and on PGlite (its execProtocol). Type names and NOT
// NULL come from the catalogs, in one more query.

// Its CommonJS build: the ES one is loaded by pg's require() too, which tap's loader refuses.
const { serialize } = createRequire(import.meta.url)('pg-protocol') as typeof import('pg-protocol')

interface Field { name: string, tableID: number, columnID: number, dataTypeID: number, dataTypeModifier: number }

export interface DescribedColumn {
  name: string
  /** pg_type.typname: 'uuid', 'text', 'timestamptz', 'job_status'… */
  typname: string
  /** pg_type.typtype: 'e' for an enum. */
  typtype: string
  /** NOT NULL of the table column it comes from; null when it is an expression (unknown). */
  notNull: boolean | null
}

/** A node-postgres query object that only parses and describes `text`. */
class Describe {
  readonly done: Promise<Field[]>
  private fields: Field[] = []
  private error: Error | undefined
  private resolve!: (fields: Field[]) => void
  private reject!: (error: Error) => void
  constructor (private readonly text: string) {
    this.done = new Promise((resolve, reject) => { this.resolve = resolve; this.reject = reject })
  }

  submit (connection: { parse: (m: object) => void, describe: (m: object) => void, sync: () => void }): void {
    connection.parse({ text: this.text, name: '', types: [] })
    connection.describe({ type: 'S', name: '' })
    connection.sync()
  }

  handleRowDescription (message: { fields: Field[] }): void { this.fields = message.fields.map(f => ({ ...f })) }
  handleError (error: Error): void { this.error = error }
  handleReadyForQuery (): void { if (this.error !== undefined) this.reject(this.error); else this.resolve(this.fields) }
  handleParseComplete (): void {}
  handleEmptyQuery (): void {}
  handleCommandComplete (): void {}
  handleDataRow (): void {}
  handlePortalSuspended (): void {}
}

async function fieldsOnServer (client: pg.ClientBase, text: string): Promise<Field[]> {
  const describe = new Describe(text)
  void client.query(describe as unknown as pg.QueryConfig)
  return await describe.done
}

async function fieldsOnPGlite (db: PGlite, text: string): Promise<Field[]> {
  const bytes = Buffer.concat([serialize.parse({ text, name: '', types: [] }), serialize.describe({ type: 'S', name: '' }), serialize.sync()])
  const { messages } = await db.execProtocol(new Uint8Array(bytes))
  let fields: Field[] = []
  for (const m of messages as Array<{ name: string, message?: string, fields?: Field[] }>) {
    if (m.name === 'error') throw new Error(m.message)
    if (m.name === 'rowDescription') fields = m.fields!.map(f => ({ ...f }))
  }
  return fields
}

const CATALOG = `
  SELECT t.typname::text, t.typtype::text, a.attnotnull AS not_null
  FROM unnest($1::oid[], $2::oid[], $3::int[]) WITH ORDINALITY AS f(oid, relid, attnum, i)
  JOIN pg_type t ON t.oid = f.oid
  LEFT JOIN pg_attribute a ON a.attrelid = f.relid AND a.attnum = f.attnum AND f.attnum > 0
  ORDER BY f.i`

interface CatalogRow { typname: string, typtype: string, not_null: boolean | null }

/** The columns a statement would return, on a PostgreSQL server (a client of the pool) or on PGlite. */
export async function describeColumns (on: { client: pg.ClientBase } | { pglite: PGlite }, text: string): Promise<DescribedColumn[]> {
  const fields = 'client' in on ? await fieldsOnServer(on.client, text) : await fieldsOnPGlite(on.pglite, text)
  const args = [fields.map(f => f.dataTypeID), fields.map(f => f.tableID), fields.map(f => f.columnID)]
  const rows = 'client' in on ? (await on.client.query<CatalogRow>(CATALOG, args)).rows : (await on.pglite.query<CatalogRow>(CATALOG, args)).rows
  return fields.map((f, i) => ({ name: f.name, typname: rows[i]!.typname, typtype: rows[i]!.typtype, notNull: f.tableID === 0 ? null : rows[i]!.not_null }))
}
