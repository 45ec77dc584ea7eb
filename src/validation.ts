import { AjvCompiler } from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'

// Request validation: Fastify's Ajv, with one change. Query strings and path parameters are
// text, so their values are coerced to the schema's types; a JSON body has types of its own
// and is validated as sent: a number where a string is wanted, or null for an integer, is a
// 400 rather than stored as "Infinity" or read as 0 (issue 55).

type Options = { customOptions?: Record<string, unknown> }
type Compile = (definition: { httpPart?: string }) => unknown

const pool = AjvCompiler() as unknown as (externalSchemas: unknown, options: Options) => Compile

function buildValidator (externalSchemas: unknown, options: Options): Compile {
  const coercing = pool(externalSchemas, options)
  const asSent = pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, coerceTypes: false } })
  return definition => definition.httpPart === 'body' ? asSent(definition) : coercing(definition)
}

export const schemaController = { compilersFactory: { buildValidator } } as unknown as NonNullable<FastifyServerOptions['schemaController']>
