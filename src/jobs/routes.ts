import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { ApiError, jobNotFound } from '../errors.js'
import type { Job } from '../schemas/job.js'
import { JobSchema } from '../schemas/job.js'
import { JobListSchema, ListJobsQuery, type JobList } from '../schemas/job-list.js'
import { ConditionalHeaders, JobParams, NotModified } from '../schemas/params.js'
import { errorResponses } from '../schemas/responses.js'
import { CursorCodec } from './cursor.js'
import { presentJob } from './present.js'
import { findJob, listJobs } from './repository.js'

const jobRoutes: FastifyPluginAsyncTypebox<{ cursorSecret: string | undefined }> = async (app, { cursorSecret }) => {
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
        200: Type.Ref(JobSchema, { description: 'The job.' }),
        304: NotModified,
        ...errorResponses([400, 401, 404, 429, 500, 503], { 404: 'No such job in the caller\'s organization (missing, or another organization\'s).' }),
      },
    },
  }, async (request): Promise<Job> => {
    const found = await findJob(app.prisma, request.caller.organization.id, request.params.jobId)
    if (found === null) throw jobNotFound()
    return presentJob(found)
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
        200: Type.Ref(JobListSchema, { description: 'A page of jobs.' }),
        304: NotModified,
        ...errorResponses([400, 401, 429, 500, 503]),
      },
    },
  }, async (request): Promise<JobList> => {
    const organizationId = request.caller.organization.id
    const { limit, status, cursor } = request.query
    const after = cursor === undefined ? undefined : cursors.decode(cursor, organizationId, status)
    if (cursor !== undefined && after === undefined) {
      throw new ApiError(400, 'Invalid request: querystring/cursor is not a cursor of this listing', { details: [{ path: 'querystring/cursor', message: 'is not a cursor of this listing (altered, or made for another organization or status filter)' }] })
    }
    const page = await listJobs(app.prisma, organizationId, { limit, ...(status !== undefined ? { status } : {}), ...(after !== undefined ? { after } : {}) })
    const last = page.jobs.at(-1)?.job
    return {
      data: page.jobs.map(presentJob),
      next_cursor: page.hasMore && last !== undefined ? cursors.encode(organizationId, status, last) : null,
    }
  })
}

export default jobRoutes
