import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { hasProAccess } from '../../auth/caller.js'
import { invalidRequest } from '../../errors.js'
import { SYNC_RETENTION, UNLESS_DEPLOYMENT } from '../../schemas/deployment-defaults.js'
import { jobExample } from '../../schemas/examples.js'
import { JobListSchema, ListJobsQuery, type JobList } from '../../schemas/job-list.js'
import { ConditionalHeaders } from '../../schemas/params.js'
import { errorResponses, notModifiedResponse, okResponse } from '../../schemas/responses.js'
import { SignedJson } from '../../signed-json.js'
import { presentJob } from '../job/present.js'
import { syncJobsPage, walkPoint } from '../sync/sync-jobs-page.js'
import { SyncTokens } from '../sync/tokens.js'
import { CursorCodec } from './cursor.js'
import { listJobs } from './list.js'

/**
 * GET /api/jobs: a page of the organization's jobs (a walk, whose last page carries a sync
 * token), or with `changed_since` a page of what changed since a token (docs/sync-design.md).
 * Cursors and tokens are signed with the app's cursor secret (CURSOR_SECRET, or app.ts's).
 */
const listJobsRoute: FastifyPluginAsyncTypebox<{ cursorSecret: string | undefined }> = async (app, { cursorSecret }) => {
  const signer = new SignedJson(cursorSecret)
  const cursors = new CursorCodec(signer)
  const syncTokens = new SyncTokens(signer)

  app.get('/jobs', {
    schema: {
      operationId: 'listJobs',
      summary: 'List jobs, or what changed since a sync token',
      description: [
        'The caller\'s organization\'s jobs, newest first (ties by id), `limit` per page. Pass `next_cursor` as `cursor` for the next page, with the same `status`; it is null on the last page. A cursor that was altered, or made for another organization or filter, is a 400.',
        '',
        `**Incremental sync.** The last page of a walk without \`status\` carries a \`sync_token\`. Later, \`changed_since=<sync_token>\` answers, paginated the same way (in the order the changes were made, not by creation date), every job that changed since (its fields, question count, interview count, average score, or anything its analytics show: the last only to a key that may read analytics, with the scope \`analytics:read\` on the Pro plan), as it is now, and in \`deleted_ids\` the ids of jobs deleted or moved out of the organization; its last page carries the next \`sync_token\`. No change is ever missed, including changes committed while a walk or a sync runs; a job may be reported twice. A token older than the change log keeps changes (${SYNC_RETENTION} ${UNLESS_DEPLOYMENT}), made on another copy of the database (a restore into another cluster or database), or expired by the operator (after a restore or a failover that lost data), is a 410 \`sync_token_expired\`: walk again from the first page. So is a token whose syncs were made by a key that could not read analytics, presented by one that can (those syncs skipped what only analytics show). \`changed_since\` with \`status\` is a 400.`,
      ].join('\n'),
      tags: ['Jobs'],
      security: [{ bearerAuth: ['jobs:read'] }],
      querystring: ListJobsQuery,
      headers: ConditionalHeaders,
      response: {
        200: okResponse(Type.Ref(JobListSchema), 'A page of jobs.', { data: [jobExample], next_cursor: 'eyJvIjoiNjNj…In0.kX9-3F0aZ8q1', sync_token: null, deleted_ids: [] }),
        304: notModifiedResponse,
        ...errorResponses([400, 401, 410], {}, { scope: 'jobs:read' }),
      },
    },
  }, async (request): Promise<JobList> => {
    const organizationId = request.caller.organization.id
    const { limit = 20, status, cursor, changed_since: changedSince } = request.query
    if (changedSince !== undefined) {
      if (status !== undefined) throw invalidRequest([{ path: 'querystring/status', message: 'cannot be combined with changed_since: a sync reports every job that changed' }])
      // The changes of analytics alone are the business of a caller that may read them.
      const analytics = request.caller.scopes.includes('analytics:read') && hasProAccess(request.caller.subscription)
      return await syncJobsPage(app.database, syncTokens, { organizationId, token: changedSince, cursor, limit, analytics })
    }
    const resumed = cursor === undefined ? undefined : cursors.decode(cursor, organizationId, status)
    if (cursor !== undefined && resumed === undefined) {
      throw invalidRequest([{ path: 'querystring/cursor', message: 'is not a cursor of this listing (altered, or made for another organization or status filter)' }])
    }
    const after = resumed?.position
    const page = await app.database.read(async reader => await listJobs(reader, organizationId, { limit, ...(status !== undefined ? { status } : {}), ...(after !== undefined ? { after } : {}) }))
    const last = page.jobs.at(-1)?.job
    // The point of the walk's sync token, only for a walk of every job (a filtered walk does
    // not make a mirror).
    const point = status === undefined ? walkPoint(resumed?.point, page, resumed !== undefined) : undefined
    return {
      data: page.jobs.map(presentJob),
      next_cursor: page.hasMore && last !== undefined ? cursors.encode(organizationId, status, last, point) : null,
      sync_token: !page.hasMore && point !== undefined ? syncTokens.token(organizationId, point) : null,
      deleted_ids: [],
    }
  })
}

export default listJobsRoute
