import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'

// The row of each raw statement, as a schema: the rows' TypeScript type comes from it
// (rows.ts), and test/db/row-types.test.ts compares it with the columns PostgreSQL describes
// for the statement (their names, their types as rows.ts converts them, and whether a table
// column can be null). A column the schema and the database disagree on fails that test.

/** A column that may be null. */
export const OrNull = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

/** Every column of `row` may be null: the row of a LEFT JOIN that found nothing. */
export const OrNullColumns = <P extends TProperties>(row: TObject<P>) =>
  Type.Object(Object.fromEntries(Object.entries(row.properties).map(([name, column]) => [name, OrNull(column)])) as { [K in keyof P]: ReturnType<typeof OrNull<P[K]>> })
