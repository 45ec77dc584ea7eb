import { Type, type Static } from '@sinclair/typebox'
import { AnalyticsQuery, JobAnalyticsSchema, WeekBinSchema } from './analytics.js'
import { JOB_STATUSES } from './job.js'
import { PeriodComparison } from './period-comparison.js'
import { Count, Nullable, StringEnum, Uuid } from './types.js'

// The organization's rollup (GET /api/analytics/organization): the single job's figures over
// every selected job, computed from their screens, never from the jobs' own averages.

export const OrganizationAnalyticsQuery = Type.Object({
  job_status: Type.Optional(Type.Array(StringEnum(JOB_STATUSES), {
    minItems: 1,
    maxItems: JOB_STATUSES.length,
    description: 'Only jobs in these states, as a repeated parameter (`job_status=active&job_status=paused`). Default: every state.',
    examples: [['active', 'paused']],
  })),
  user_id: Type.Optional(Uuid({ description: 'Only the jobs of this recruiter (the job\'s owner, `user_id` of GET /api/jobs/{jobId}). A user of no job, or of another organization, gives an empty rollup.' })),
  ...AnalyticsQuery.properties,
}, { additionalProperties: false })

const { properties: single } = JobAnalyticsSchema

export const OrganizationAnalyticsSchema = Type.Object({
  job_count: Count({ description: 'The selected jobs of the caller\'s organization.' }),
  average_score: Nullable(Type.Number(), { description: 'Mean score of every completed screen of the selected jobs that has a score; null when none has. Not an average of the jobs\' averages.' }),
  completion_rate: Type.Integer({ format: 'int32', minimum: 0, maximum: 100, description: 'round(100 × completed / total) over every screen of the selected jobs, halves rounded up; 0 with no screens. Not an average of the jobs\' rates.' }),
  average_score_by_week: Type.Array(Type.Ref(WeekBinSchema), { maxItems: 10000, description: 'Completed screens of every selected job binned by the Monday of their completion week in `tz`, ascending: `count` all of them, `average_score` the mean of the scored ones (each screen weighs one). Weeks with none are omitted, except inside a `from`/`to` range, where every week appears.' }),
  interviews_by_status: single.interviews_by_status,
  total_interviews: Count({ description: 'All screens of the selected jobs.' }),
  ...PeriodComparison,
}, {
  $id: 'OrganizationAnalytics',
  title: 'OrganizationAnalytics',
  description: 'The analytics of the caller\'s organization, over the jobs the filters select: the single job\'s figures computed over all their screens at once, in one snapshot.',
  additionalProperties: false,
})

export type OrganizationAnalytics = Static<typeof OrganizationAnalyticsSchema>

export const ORGANIZATION_ANALYTICS_DESCRIPTION = [
  'The analytics of the caller\'s whole organization, or of some of its jobs (`job_status`, `user_id`), for a dashboard. **Pro plan only**, as `GET /api/jobs/{jobId}/analytics`.',
  '',
  '- Every figure is computed over the selected jobs\' screens themselves, as if they were one job\'s: the rate over all screens, the averages over all scored completions (never an average of the jobs\' averages).',
  '- `average_score` is the mean over every scored completed screen; `average_score_by_week` bins as the single job\'s, with `tz`, `from` and `to` as it takes them; `completion_rate`, `interviews_by_status` and `total_interviews` describe the selected jobs whole, whatever the range.',
  '- `compare=previous_period` (with `from` and `to`) adds `period` (the range\'s completions and their mean), `previous` (the same for the range moved back by as many whole weeks as it spans, weeks aligned, with its bins) and `change` (the differences).',
  '- Read in one snapshot of the database.',
  '',
  'Send the `ETag` back in `If-None-Match` to get a 304 while no selected job\'s screens changed and the selection is the same: answered from a version of the jobs\' figures, without computing them.',
  '',
  'One request of the rate limit. Needs the scope `analytics:read`.',
  '',
  'Order of checks: 401 (credential), 403 `insufficient_scope`, 400 (parameters: an unknown `job_status`, a malformed `user_id`, an unknown zone, a range the single-job call refuses), 403 `upgrade_required` (plan).',
].join('\n')
