import { Type, type Static } from '@sinclair/typebox'
import { AnalyticsQuery, JobAnalyticsSchema } from './analytics.js'
import { Uuid, Word } from './types.js'

// The dashboard's operations: many jobs' analytics in one call (GET /api/analytics/jobs).

/** At most this many jobs in one batch. */
export const MAX_BATCH_JOBS = 100

export const JobsAnalyticsQuery = Type.Object({
  job_id: Type.Array(Uuid(), {
    minItems: 1,
    maxItems: MAX_BATCH_JOBS,
    description: `The jobs, 1 to ${MAX_BATCH_JOBS}, as a repeated parameter (\`job_id=…&job_id=…\`). Answered in the order given; an id given twice is answered once, where it first appears.`,
    examples: [['91c1b009-4099-5628-9d13-3aaeb0acf3e9', '2b7e07e1-8f3c-5d2a-9c1e-6a4f0b3d9e21']],
  }),
  ...AnalyticsQuery.properties,
}, { additionalProperties: false })

export const JobAnalyticsErrorSchema = Type.Object({
  code: Word({ description: '`not_found`: no such job in the caller\'s organization (missing, or another organization\'s: the two are answered alike).', examples: ['not_found'] }),
  message: Type.String({ maxLength: 200, description: 'For a person.' }),
}, { $id: 'JobAnalyticsError', title: 'JobAnalyticsError', additionalProperties: false })

export const JobAnalyticsEntrySchema = Type.Union([
  Type.Object({
    job_id: Uuid({ description: 'The job, as asked (lower case).' }),
    analytics: Type.Ref(JobAnalyticsSchema),
  }, { additionalProperties: false, title: 'JobAnalyticsFound' }),
  Type.Object({
    job_id: Uuid({ description: 'The job, as asked (lower case).' }),
    error: Type.Ref(JobAnalyticsErrorSchema),
  }, { additionalProperties: false, title: 'JobAnalyticsNotFound' }),
], { $id: 'JobAnalyticsEntry', title: 'JobAnalyticsEntry', description: 'One asked job: its `analytics`, or an `error` when it is not the caller\'s.' })

export const JobsAnalyticsSchema = Type.Object({
  jobs: Type.Array(Type.Ref(JobAnalyticsEntrySchema), { maxItems: MAX_BATCH_JOBS, description: 'One entry per distinct asked job, in the order asked.' }),
}, {
  $id: 'JobsAnalytics',
  title: 'JobsAnalytics',
  description: 'Many jobs\' analytics, all read in one snapshot of the database: the figures of one answer always agree with each other.',
  additionalProperties: false,
})

export type JobsAnalytics = Static<typeof JobsAnalyticsSchema>

export const JOBS_ANALYTICS_DESCRIPTION = [
  `The analytics of up to ${MAX_BATCH_JOBS} jobs in one call, for a dashboard: \`GET /api/analytics/jobs?job_id=…&job_id=…\`. **Pro plan only**, as \`GET /api/jobs/{jobId}/analytics\`: a caller on the free tier gets 403 with \`upgrade_url\`, whatever the jobs.`,
  '',
  '- Each entry\'s `analytics` is exactly what `GET /api/jobs/{jobId}/analytics` answers for that job with the same `tz`, `from`, `to` and `compare`.',
  '- The whole answer is read in one snapshot of the database: two jobs\' figures never straddle a write.',
  '- A job that is not the caller\'s, missing or another organization\'s, gets `error` with `code: not_found`, the same in both cases.',
  '- Entries come in the order asked; an id asked twice is answered once.',
  '',
  'Send the `ETag` back in `If-None-Match` to get a 304 while none of the jobs\' screens changed: answered from a version of their figures, without computing them.',
  '',
  'One request of the rate limit, whatever the number of jobs. Needs the scope `analytics:read`.',
  '',
  'Order of checks: 401 (credential), 403 `insufficient_scope`, 400 (parameters: no id, more than 100, a malformed id, an unknown zone, a range the single-job call refuses), 403 `upgrade_required` (plan).',
].join('\n')
