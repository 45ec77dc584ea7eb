import { Type } from '@sinclair/typebox'
import { Count, Nullable } from './types.js'

export const WeekBinSchema = Type.Object({
  week: Type.String({ format: 'date', maxLength: 10, description: 'The Monday (`YYYY-MM-DD`) of the week, in the requested time zone.', examples: ['2026-01-05'] }),
  average_score: Nullable(Type.Number(), { description: 'Mean score of the completed screens of that week that have a score; null when none has.' }),
  count: Count({ description: 'Completed screens of that week.' }),
}, { $id: 'WeekBin', title: 'WeekBin', additionalProperties: false })
