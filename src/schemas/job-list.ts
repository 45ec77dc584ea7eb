import { Type, type Static } from '@sinclair/typebox'
import { JOB_STATUSES, JobSchema } from './job.js'
import { Nullable, StringEnum } from './types.js'

export const JobListSchema = Type.Object({
  data: Type.Array(Type.Ref(JobSchema), { maxItems: 100, description: 'Jobs of this page, newest first.' }),
  next_cursor: Nullable(Type.String({ maxLength: 512 }), { description: 'Pass as `cursor` for the next page; null on the last page.' }),
}, { $id: 'JobList', title: 'JobList', description: 'A page of jobs.', additionalProperties: false })

export const ListJobsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: 20, description: 'Jobs per page.' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'The `next_cursor` of the previous page, unchanged, with the same `status`.' })),
  status: Type.Optional(StringEnum(JOB_STATUSES, { description: 'Only jobs in this state.' })),
}, { additionalProperties: false })

export type JobList = Static<typeof JobListSchema>
