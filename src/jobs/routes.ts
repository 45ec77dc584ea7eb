import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { ApiError, invalidRequest, jobNotFound } from '../errors.js'
import type { Job } from '../schemas/job.js'
import { JobSchema } from '../schemas/job.js'
import { JobListSchema, ListJobsQuery, type JobList } from '../schemas/job-list.js'
import { analyticsExample, jobExample } from '../schemas/examples.js'
import { ConditionalHeaders, JobParams } from '../schemas/params.js'
import { errorResponses, notModifiedResponse, okResponse } from '../schemas/responses.js'
import { CursorCodec } from './cursor.js'
import { presentJob } from './present.js'
import { buildAnalytics, isTimeZone, mondayOf, rangeProblems } from './analytics.js'
import { analyticsVersion, findJob, isUnknownTimeZone, jobAnalytics, listJobs } from './repository.js'
import { ifNoneMatchMatches, notModified, versionedEtag } from '../plugins/caching.js'
import { version as serviceVersion } from '../version.js'
import { requirePro } from '../plugins/plan-guard.js'
import { AnalyticsQuery, JobAnalyticsSchema, type JobAnalytics } from '../schemas/analytics.js'
import type { Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'

const TZ_PROBLEM = { path: 'querystring/tz', message: 'must be an IANA time zone name, e.g. Europe/Berlin' }
const invalidTimeZone = (): ApiError => invalidRequest([TZ_PROBLEM])

/** The checks of the analytics query that a JSON schema cannot express: still a 400, before the plan guard. */
async function validateAnalyticsQuery (request: FastifyRequest<{ Querystring: Static<typeof AnalyticsQuery> }>): Promise<void> {
  const { tz = 'UTC', from, to } = request.query
  const details = [
    ...(isTimeZone(tz) ? [] : [TZ_PROBLEM]),
    ...rangeProblems(from, to),
  ]
  if (details.length > 0) throw invalidRequest(details)
}

const jobRoutes: FastifyPluginAsyncTypebox<{ cursorSecret: string | undefined, upgradeUrl: string, screensReadMax: number }> = async (app, { cursorSecret, upgradeUrl, screensReadMax }) => {
  const cursors = new CursorCodec(cursorSecret)

  app.get('/jobs/:jobId', {
    schema: {
      operationId: 'getJob',
      summary: 'Get a job',
      description: 'The job with its counts: `question_count`, `interview_count` (screens in any status) and `average_score` (mean score of the completed screens that have one, unrounded; null when there is none). `logo_url` and `brand_color` are null unless branding was customized.\n\nA job of another organization is reported exactly like a missing one: 404 `Job not found`.\n\nSend the `ETag` back in `If-None-Match` to get a 304 when nothing changed.',
      tags: ['Jobs'],
      security: [{ bearerAuth: [] }],
      params: JobParams,
      headers: ConditionalHeaders,
      response: {
        200: okResponse(Type.Ref(JobSchema), 'The job.', jobExample),
        304: notModifiedResponse,
        ...errorResponses([400, 401, 404], { 404: 'No such job in the caller\'s organization (missing, or another organization\'s).' }),
      },
    },
  }, async (request): Promise<Job> => {
    const found = await app.database.read(async prisma => await findJob(prisma, request.caller.organization.id, request.params.jobId))
    if (found === null) throw jobNotFound()
    return presentJob(found)
  })

  app.get('/jobs/:jobId/analytics', {
    schema: {
      operationId: 'getJobAnalytics',
      summary: 'Get a job\'s analytics (Pro)',
      description: [
        'Completion and score analytics of one job. **Pro plan only**: a caller on the free tier (free plan, or a Pro subscription that is canceled, past due or past its period end) gets 403 with `upgrade_url`, whether or not the job exists. Check `entitlements.analytics` of `GET /api/me` first to avoid it.',
        '',
        '- `completion_rate`: round(100 × completed / total), halves up; 0 with no screens.',
        '- `interviews_by_status`: screens per status, always the three keys; `total_interviews`: all screens.',
        '- `average_score_by_week`: completed screens by the Monday of their completion week in `tz` (default UTC; daylight saving respected), ascending; `count` = completed screens that week, `average_score` = mean of those with a score, null when none has. Weeks with nothing completed are omitted, except inside a `from`/`to` range: then every week overlapping the range appears, with `count: 0` and `average_score: null` where empty.',
        '',
        'Send the `ETag` back in `If-None-Match` to get a 304 while the job\'s screens have not changed: it is answered from a version of the job\'s figures, without computing them, whatever the job\'s size.',
        '',
        'Order of checks: 401 (credential), 400 (parameters), 403 (plan), 404 (job).',
      ].join('\n'),
      tags: ['Analytics'],
      security: [{ bearerAuth: [] }],
      params: JobParams,
      querystring: AnalyticsQuery,
      headers: ConditionalHeaders,
      response: {
        200: okResponse(Type.Ref(JobAnalyticsSchema), 'The job\'s analytics.', analyticsExample),
        304: notModifiedResponse,
        ...errorResponses([400, 401, 403, 404], { 404: 'No such job in the caller\'s organization (missing, or another organization\'s).' }),
      },
    },
    preHandler: [validateAnalyticsQuery, requirePro(upgradeUrl)],
  }, async (request, reply): Promise<JobAnalytics | FastifyReply> => {
    const organizationId = request.caller.organization.id
    const { jobId } = request.params
    const { tz = 'UTC', from, to } = request.query
    const range = from !== undefined && to !== undefined ? { from, to } : undefined
    const weeks = range !== undefined ? { weeks: { first: mondayOf(range.from), last: mondayOf(range.to) } } : {}
    // The ETag names the job's summary version and every input of the answer (the service
    // version too: a release may compute the same data differently), so that a poll whose
    // data did not change is answered from the version alone, one read of at most 8 rows.
    const etagAt = (summaries: string): string => versionedEtag(['analytics', serviceVersion, jobId, summaries, tz, from ?? '', to ?? ''])
    const zoneChecked = (error: unknown): never => { throw isUnknownTimeZone(error) ? invalidTimeZone() : error }
    const conditional = request.headers['if-none-match']
    if (conditional !== undefined) {
      const current = await app.database.read(async prisma => await analyticsVersion(prisma, organizationId, jobId, tz)).catch(zoneChecked)
      if (current === null) throw jobNotFound()
      const etag = etagAt(current)
      if (ifNoneMatchMatches(conditional, etag)) return notModified(reply, etag)
    }
    const rows = await app.database.read(async prisma => await jobAnalytics(prisma, organizationId, jobId, { tz, screensReadMax, ...weeks })).catch(zoneChecked)
    if (rows === null) throw jobNotFound()
    reply.header('etag', etagAt(rows.version))
    return buildAnalytics(rows, range)
  })

  app.get('/jobs', {
    schema: {
      operationId: 'listJobs',
      summary: 'List jobs',
      description: 'The caller\'s organization\'s jobs, newest first (ties by id), `limit` per page. Pass `next_cursor` as `cursor` for the next page, with the same `status`; it is null on the last page. A cursor that was altered, or made for another organization or filter, is a 400.',
      tags: ['Jobs'],
      security: [{ bearerAuth: [] }],
      querystring: ListJobsQuery,
      headers: ConditionalHeaders,
      response: {
        200: okResponse(Type.Ref(JobListSchema), 'A page of jobs.', { data: [jobExample], next_cursor: 'eyJvIjoiNjNj…In0.kX9-3F0aZ8q1' }),
        304: notModifiedResponse,
        ...errorResponses([400, 401]),
      },
    },
  }, async (request): Promise<JobList> => {
    const organizationId = request.caller.organization.id
    const { limit = 20, status, cursor } = request.query
    // Ajv coerces "1e309" to Infinity and lets it pass `integer` and `maximum`.
    if (!Number.isSafeInteger(limit)) {
      throw invalidRequest([{ path: 'querystring/limit', message: 'must be an integer from 1 to 100' }])
    }
    const after = cursor === undefined ? undefined : cursors.decode(cursor, organizationId, status)
    if (cursor !== undefined && after === undefined) {
      throw invalidRequest([{ path: 'querystring/cursor', message: 'is not a cursor of this listing (altered, or made for another organization or status filter)' }])
    }
    const page = await app.database.read(async prisma => await listJobs(prisma, organizationId, { limit, ...(status !== undefined ? { status } : {}), ...(after !== undefined ? { after } : {}) }))
    const last = page.jobs.at(-1)?.job
    return {
      data: page.jobs.map(presentJob),
      next_cursor: page.hasMore && last !== undefined ? cursors.encode(organizationId, status, last) : null,
    }
  })
}

export default jobRoutes
