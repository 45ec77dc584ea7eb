import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { databaseUnavailable, invalidRequest, jobNotFound } from '../errors.js'
import type { Job } from '../schemas/job.js'
import { JobSchema } from '../schemas/job.js'
import { JobListSchema, ListJobsQuery, type JobList } from '../schemas/job-list.js'
import { analyticsExample, jobExample } from '../schemas/examples.js'
import { ConditionalHeaders, JobParams } from '../schemas/params.js'
import { errorResponses, notModifiedResponse, notModifiedWith, okResponse, TZDATA_VERSION } from '../schemas/responses.js'
import { CursorCodec } from './cursor.js'
import { SignedJson } from './signed.js'
import { SyncTokens } from '../sync/tokens.js'
import { syncJobsPage, walkPoint } from '../sync/pages.js'
import { presentJob } from './present.js'
import { buildAnalytics, mondayOf, rangeProblems } from './analytics.js'
import { readTimeZone, tzProblem } from '../zones/names.js'
import type { ZoneRulesStore } from '../zones/store.js'
import { analyticsVersion, findJob, jobAnalytics, listJobs, ZoneRulesMissing } from './repository.js'
import { ifNoneMatchMatches, notModified, versionedEtag } from '../plugins/caching.js'
import { version as serviceVersion } from '../version.js'
import { requirePro } from '../plugins/plan-guard.js'
import { hasProAccess } from '../auth/caller.js'
import { AnalyticsQuery, JobAnalyticsSchema, type JobAnalytics } from '../schemas/analytics.js'
import type { Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'

const MAX_INT4 = 2_147_483_647

const jobRoutes: FastifyPluginAsyncTypebox<{ cursorSecret: string | undefined, upgradeUrl: string, screensReadMax: number, zoneRules: ZoneRulesStore }> = async (app, { cursorSecret, upgradeUrl, screensReadMax, zoneRules }) => {
  const signer = new SignedJson(cursorSecret)
  const cursors = new CursorCodec(signer)
  const syncTokens = new SyncTokens(signer)
  const { rules } = zoneRules

  /** The checks of the analytics query that a JSON schema cannot express: still a 400, before the plan guard. */
  async function validateAnalyticsQuery (request: FastifyRequest<{ Querystring: Static<typeof AnalyticsQuery> }>): Promise<void> {
    const { tz = 'UTC', from, to } = request.query
    const reading = readTimeZone(tz, rules)
    const details = [
      ...('refused' in reading ? [tzProblem(tz, reading.refused)] : []),
      ...rangeProblems(from, to),
    ]
    if (details.length > 0) throw invalidRequest(details)
  }

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

  app.get('/jobs/:jobId/analytics', {
    schema: {
      operationId: 'getJobAnalytics',
      summary: 'Get a job\'s analytics (Pro)',
      description: [
        'Completion and score analytics of one job. **Pro plan only**: a caller on the free tier (free plan, or a Pro subscription that is canceled, past due or past its period end) gets 403 with `upgrade_url`, whether or not the job exists. Check `entitlements.analytics` of `GET /api/me` first to avoid it.',
        '',
        '- `completion_rate`: round(100 × completed / total), halves up; 0 with no screens.',
        '- `interviews_by_status`: screens per status, always the three keys; `total_interviews`: all screens.',
        '- `average_score_by_week`: completed screens by the Monday of their completion week in `tz` (default UTC; daylight saving respected, by the zone rules of the tzdata release that the `Tzdata-Version` header names), ascending; `count` = completed screens that week, `average_score` = mean of those with a score, null when none has. Weeks with nothing completed are omitted, except inside a `from`/`to` range: then every week overlapping the range appears, with `count: 0` and `average_score: null` where empty.',
        '',
        'Send the `ETag` back in `If-None-Match` to get a 304 while the job\'s screens have not changed: it is answered from a version of the job\'s figures, without computing them, whatever the job\'s size.',
        '',
        'Needs the scope `analytics:read`: a key without it gets 403 `insufficient_scope`, whatever the plan and the job.',
        '',
        'Order of checks: 401 (credential), 403 `insufficient_scope` (the key\'s scopes), 400 (parameters), 403 `upgrade_required` (plan), 404 (job).',
      ].join('\n'),
      tags: ['Analytics'],
      security: [{ bearerAuth: ['analytics:read'] }],
      params: JobParams,
      querystring: AnalyticsQuery,
      headers: ConditionalHeaders,
      response: {
        200: okResponse(Type.Ref(JobAnalyticsSchema), 'The job\'s analytics.', analyticsExample, TZDATA_VERSION),
        304: notModifiedWith(TZDATA_VERSION),
        ...errorResponses([400, 401, 404], { 404: 'No such job in the caller\'s organization (missing, or another organization\'s).' }, { scope: 'analytics:read', plan: true }),
      },
    },
    preHandler: [validateAnalyticsQuery, requirePro(upgradeUrl)],
  }, async (request, reply): Promise<JobAnalytics | FastifyReply> => {
    const organizationId = request.caller.organization.id
    const { jobId } = request.params
    const { tz = 'UTC', from, to } = request.query
    // The zone the name stands for in the service's rules (validateAnalyticsQuery refused the
    // others): the statement computes with its rules, and the ETag names them and it.
    const reading = readTimeZone(tz, rules)
    if (!('zone' in reading)) throw invalidRequest([tzProblem(tz, reading.refused)])
    const { zone } = reading
    const range = from !== undefined && to !== undefined ? { from, to } : undefined
    const weeks = range !== undefined ? { weeks: { first: mondayOf(range.from), last: mondayOf(range.to) } } : {}
    // The ETag names the job's summary version and every input of the answer (the service
    // version too: a release may compute the same data differently; and the rules' id: two
    // instances on two tzdata releases never give one ETag for two answers), so that a poll
    // whose data did not change is answered from the version alone, one read of at most 8 rows.
    const etagAt = (summaries: string): string => versionedEtag(['analytics', serviceVersion, jobId, summaries, rules.id, zone, from ?? '', to ?? ''])
    const conditional = request.headers['if-none-match']
    if (conditional !== undefined) {
      const current = await app.database.read(async reader => await analyticsVersion(reader, organizationId, jobId))
      if (current === null) throw jobNotFound()
      const etag = etagAt(current)
      if (ifNoneMatchMatches(conditional, etag)) return notModified(reply.header('tzdata-version', rules.version), etag)
    }
    await zoneRules.ready()
    // A zone whose rules the summaries cannot answer exactly (none in tzdata 2026f: see
    // zones/rules.ts) is binned from the job's screens, whatever their number.
    const readMax = rules.summarizable(zone) ? screensReadMax : MAX_INT4
    const rows = await app.database.read(async reader => await jobAnalytics(reader, organizationId, jobId, { rules: { set: rules.id, zone }, ...weeks, screensReadMax: readMax }))
      .catch((error: unknown) => {
        // Read on the primary, which had them: deleted since. Stored again by the next request.
        if (!(error instanceof ZoneRulesMissing)) throw error
        request.log.error({ err: error }, 'zone rules missing from the primary')
        zoneRules.forget()
        throw databaseUnavailable()
      })
    if (rows === null) throw jobNotFound()
    reply.header('etag', etagAt(rows.version)).header('tzdata-version', rules.version)
    return buildAnalytics(rows, range)
  })

  app.get('/jobs', {
    schema: {
      operationId: 'listJobs',
      summary: 'List jobs, or what changed since a sync token',
      description: [
        'The caller\'s organization\'s jobs, newest first (ties by id), `limit` per page. Pass `next_cursor` as `cursor` for the next page, with the same `status`; it is null on the last page. A cursor that was altered, or made for another organization or filter, is a 400.',
        '',
        '**Incremental sync.** The last page of a walk without `status` carries a `sync_token`. Later, `changed_since=<sync_token>` answers, paginated the same way (in the order the changes were made, not by creation date), every job that changed since (its fields, question count, interview count, average score, or anything its analytics show: the last only to a key that may read analytics, with the scope `analytics:read` on the Pro plan), as it is now, and in `deleted_ids` the ids of jobs deleted or moved out of the organization; its last page carries the next `sync_token`. No change is ever missed, including changes committed while a walk or a sync runs; a job may be reported twice. A token older than the change log kept (`SYNC_RETENTION_HOURS`), made on another copy of the database (a restore into another cluster or database), or expired by the operator (after a restore or a failover that lost data), is a 410 `sync_token_expired`: walk again from the first page. So is a token whose syncs were made by a key that could not read analytics, presented by one that can (those syncs skipped what only analytics show). `changed_since` with `status` is a 400.',
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
    // Ajv coerces "1e309" to Infinity and lets it pass `integer` and `maximum`.
    if (!Number.isSafeInteger(limit)) {
      throw invalidRequest([{ path: 'querystring/limit', message: 'must be an integer from 1 to 100' }])
    }
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

export default jobRoutes
