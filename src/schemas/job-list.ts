import { Type, type Static } from '@sinclair/typebox'
import { JOB_STATUSES, JobSchema } from './job.js'
import { Nullable, StringEnum } from './types.js'

// Tokens carry a snapshot of at most a few transaction ids (src/changes/snapshot.ts): well
// under this bound.
const TOKEN = { minLength: 1, maxLength: 512 }

export const JobListSchema = Type.Object({
  data: Type.Array(Type.Ref(JobSchema), { maxItems: 100, description: 'Jobs of this page: newest first in a walk; in the order of their changes in a sync (`changed_since`), each as it is now.' }),
  next_cursor: Nullable(Type.String({ maxLength: 512 }), { description: 'Pass as `cursor` for the next page (with the same `status` or `changed_since`); null on the last page.' }),
  sync_token: Nullable(Type.String({ maxLength: 512 }), {
    description: 'On the last page of a walk without `status`, and of a sync: pass it as `changed_since` later to get what changed since. Null on the other pages, and in a walk filtered by `status`.',
  }),
  deleted_ids: Type.Array(Type.String({ format: 'uuid', maxLength: 36 }), {
    maxItems: 100,
    description: 'In a sync (`changed_since`): ids of jobs that changed and are no longer the organization\'s (deleted, or moved to another organization). Always empty in a walk.',
  }),
}, { $id: 'JobList', title: 'JobList', description: 'A page of jobs: of a walk through the list, or of a sync of what changed since a `sync_token`.', additionalProperties: false })

export const ListJobsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: 20, description: 'Jobs per page (in a sync, jobs and deleted ids together).' })),
  cursor: Type.Optional(Type.String({ ...TOKEN, description: 'The `next_cursor` of the previous page, unchanged, with the same `status` or `changed_since`.' })),
  status: Type.Optional(StringEnum(JOB_STATUSES, { description: 'Only jobs in this state. Not with `changed_since`.' })),
  changed_since: Type.Optional(Type.String({
    ...TOKEN,
    description: 'A `sync_token`: answers, in the order the changes were made, every job of the organization that changed after the token was made (its fields, its questions, its screens: anything the job shows, and what its analytics show to a key that may read them), as it is now, and in `deleted_ids` those gone from the organization. No change is missed, a job may come twice. Its last page has the next `sync_token`. An expired token is a 410 `sync_token_expired`; an altered one, or another organization\'s, a 400.',
  })),
}, { additionalProperties: false })

export type JobList = Static<typeof JobListSchema>
