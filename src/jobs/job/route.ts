import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { jobNotFound } from '../../errors.js'
import { jobExample } from '../../schemas/examples.js'
import { JobSchema, type Job } from '../../schemas/job.js'
import { ConditionalHeaders, JobParams } from '../../schemas/params.js'
import { errorResponses, notModifiedResponse, okResponse } from '../../schemas/responses.js'
import { findJob } from './find-job.js'
import { presentJob } from './present.js'

/** GET /api/jobs/{jobId}: a job of the caller's organization, with its counts. */
const getJobRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/jobs/:jobId', {
    schema: {
      operationId: 'getJob',
      summary: 'Get a job',
      description: 'The job with its counts: `question_count`, `interview_count` (screens in any status) and `average_score` (mean score of the completed screens that have one, unrounded; null when there is none). `logo_url` and `brand_color` are null unless branding was customized.\n\nA job of another organization is reported exactly like a missing one: 404 `Job not found`.\n\nNeeds the scope `jobs:read`: a key without it gets 403 `insufficient_scope`, whatever the job (existing, another organization\'s or missing).\n\nSend the `ETag` back in `If-None-Match` to get a 304 when nothing changed.',
      tags: ['Jobs'],
      security: [{ bearerAuth: ['jobs:read'] }],
      params: JobParams,
      headers: ConditionalHeaders,
      response: {
        200: okResponse(Type.Ref(JobSchema), 'The job.', jobExample),
        304: notModifiedResponse,
        ...errorResponses([400, 401, 404], { 404: 'No such job in the caller\'s organization (missing, or another organization\'s).' }, { scope: 'jobs:read' }),
      },
    },
  }, async (request): Promise<Job> => {
    const found = await app.database.read(async reader => await findJob(reader, request.caller.organization.id, request.params.jobId))
    if (found === null) throw jobNotFound()
    return presentJob(found)
  })
}

export default getJobRoute
