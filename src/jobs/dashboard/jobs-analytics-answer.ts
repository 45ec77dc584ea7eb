import { analyticsBody } from '../analytics/body.js'
import type { ComparisonWindow } from '../analytics/comparison-text.js'
import type { AnalyticsText } from '../analytics/read.js'
import type { AskedJob } from './read-jobs-analytics.js'

// The batch's answer, a pure function of the statement's rows: each job's analytics is the
// single-job operation's own text (analyticsBody), so the two can never differ; a job that is
// not the caller's gets one entry, the same whether it is missing or another organization's.

/** An entry's error for a job that is not the caller's (missing, or another organization's). */
export const JOB_NOT_FOUND_ENTRY = { code: 'not_found', message: 'No such job in the caller\'s organization.' } as const

const notFound = JSON.stringify(JOB_NOT_FOUND_ENTRY)

/**
 * The body of GET /api/analytics/jobs: `{"jobs":[…]}` in the order asked, as JSON text;
 * `analyticsOf` gives a found job's analytics text (the single job's answer: computed, or kept).
 */
export function jobsAnalyticsBody (jobs: AskedJob[], analyticsOf: (job: AskedJob & { found: AnalyticsText }, index: number) => string): string {
  let out = ''
  jobs.forEach((job, index) => {
    out += `${out === '' ? '' : ','}{"job_id":"${job.jobId}",` + (job.found === null ? `"error":${notFound}}` : `"analytics":${analyticsOf(job as AskedJob & { found: AnalyticsText }, index)}}`)
  })
  return `{"jobs":[${out}]}`
}

/** A found job's analytics text as the single job answers it (analyticsBody). */
export const computedAnalytics = (range?: { from: string, to: string }, compare?: ComparisonWindow) =>
  ({ found }: { found: AnalyticsText }): string => analyticsBody(found, range, compare)

/** What the batch's ETag is made of, per job: its figures' version, `-` for one not the caller's. */
export const versionsOf = (jobs: AskedJob[]): string[] => jobs.map(({ found }) => found?.version ?? '-')

/**
 * The asked ids, lower-cased (a UUID's hexadecimal is case-insensitive), each once, in the order
 * of their first mention.
 */
export const distinctIds = (ids: string[]): string[] => [...new Set(ids.map(id => id.toLowerCase()))]
