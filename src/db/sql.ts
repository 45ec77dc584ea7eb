import { Prisma } from '../generated/prisma/client.js'

// The one SQL vocabulary of our statements: Prisma's tagged template (values sent as
// parameters, never in the text), under short names. `raw` is for text we wrote or checked
// (a page size, a column list), never for a value.

export type Sql = Prisma.Sql
export const sql = Prisma.sql
export const raw = Prisma.raw
export const join = Prisma.join
export const empty = Prisma.empty
