import { Type, type TSchema, type Static, type SchemaOptions } from '@sinclair/typebox'

/**
 * A nullable value as OpenAPI 3.1 writes it (`type: ['string', 'null']`), which SDK
 * generators turn into `string | null`; TypeBox's Union would produce an anyOf.
 */
export const Nullable = <T extends TSchema & { type: string }>(schema: T, options: SchemaOptions = {}) =>
  Type.Unsafe<Static<T> | null>({ ...schema, ...options, type: [schema.type, 'null'] })

export const Uuid = (options: SchemaOptions = {}) =>
  Type.String({ format: 'uuid', maxLength: 36, ...options })

export const Timestamp = (options: SchemaOptions = {}) =>
  Type.String({ format: 'date-time', maxLength: 30, description: 'ISO 8601 UTC timestamp with milliseconds.', examples: ['2026-01-05T09:30:00.000Z'], ...options })

/** A string enum as OpenAPI writes it (`type: string, enum: [...]`), not an anyOf of consts. */
export const StringEnum = <T extends string>(values: readonly T[], options: SchemaOptions = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options })

/** A count: a non-negative 32-bit integer. */
export const Count = (options: SchemaOptions = {}) =>
  Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, ...options })

/** A string of a closed, lower-case vocabulary that may grow (documented as such, not an enum). */
export const Word = (options: SchemaOptions = {}) =>
  Type.String({ maxLength: 32, pattern: '^[a-z_]+$', ...options })
