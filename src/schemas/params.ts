import { Type } from '@sinclair/typebox'
import { Uuid } from './types.js'

export const JobParams = Type.Object({
  jobId: Uuid({ description: 'Identifier of the job (a UUID).', examples: ['91c1b009-4099-5628-9d13-3aaeb0acf3e9'] }),
})

export const ConditionalHeaders = Type.Object({
  'if-none-match': Type.Optional(Type.String({ maxLength: 1024, description: 'The `ETag` of a previous response: 304 with no body if nothing changed.' })),
})
