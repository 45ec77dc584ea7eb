import { analyticsBody } from '../analytics/body.js'
import type { ComparisonWindow } from '../analytics/comparison-text.js'
import type { AnalyticsText } from '../analytics/read.js'

// The batch's answer, a pure function of the statement's rows: each job's analytics is the
// single-job operation's own text (analyticsBody), so the two can never differ; a job that is
// not the caller's gets one entry, the same whether it is missing or another organization's.

/** An entry's error for a job that is not the caller's (missing, or another organization's). */
export const JOB_NOT_FOUND_ENTRY = { code: 'not_found', message: 'No such job in the caller\'s organization.' } as const

const notFound = JSON.stringify(JOB_NOT_FOUND_ENTRY)

/** An asked job's entry: `found` when it is the caller's (figures computed, or a kept answer's version). */
export interface Entry<T> { jobId: string, found: T | null }

const OPEN = Buffer.from('{"jobs":[')
const CLOSE = Buffer.from('}')
const END = Buffer.from(']}')

/**
 * The body of GET /api/analytics/jobs: `{"jobs":[…]}` in the order asked, as JSON bytes (one
 * copy of each answer's: bytes sent as they are, where a text of pieces is flattened and
 * encoded on every send); `analyticsOf` gives a found job's analytics (the single job's
 * answer: computed, or kept).
 */
export function jobsAnalyticsBody<T> (jobs: Array<Entry<T>>, analyticsOf: (found: T, index: number) => Buffer): Buffer {
  const parts: Buffer[] = [OPEN]
  jobs.forEach(({ jobId, found }, index) => {
    const head = `${index === 0 ? '' : ','}{"job_id":"${jobId}",`
    if (found === null) parts.push(Buffer.from(`${head}"error":${notFound}}`))
    else parts.push(Buffer.from(`${head}"analytics":`), analyticsOf(found, index), CLOSE)
  })
  parts.push(END)
  return Buffer.concat(parts)
}

/** A found job's analytics text as the single job answers it (analyticsBody). */
export const computedAnalytics = (range?: { from: string, to: string }, compare?: ComparisonWindow) =>
  (found: AnalyticsText): string => analyticsBody(found, range, compare)

/** What the batch's ETag is made of, per job: its figures' version, `-` for one not the caller's. */
export const versionsOf = (jobs: Array<Entry<{ version: string }>>): string[] => jobs.map(({ found }) => found?.version ?? '-')

/**
 * The asked ids, lower-cased (a UUID's hexadecimal is case-insensitive), each once, in the order
 * of their first mention.
 */
export const distinctIds = (ids: string[]): string[] => [...new Set(ids.map(id => id.toLowerCase()))]
