import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { requirePro } from '../../plugins/plan-guard.js'
import { AnalyticsQuery, JobAnalyticsSchema } from '../../schemas/analytics.js'
import { analyticsExample } from '../../schemas/examples.js'
import { ConditionalHeaders, JobParams } from '../../schemas/params.js'
import { errorResponses, notModifiedWith, okResponse, TZDATA_VERSION } from '../../schemas/responses.js'
import type { ZoneRulesStore } from '../../zones/store.js'
import type { AnswerCache } from './answer-cache.js'
import { askHook } from './ask-hook.js'
import { answerJobAnalytics } from './job-analytics-answer.js'

/**
 * GET /api/jobs/{jobId}/analytics (Pro): a job's figures and weekly bins in a zone, by the
 * service's zone rules (`zoneRules`: src/zones/).
 */
const jobAnalyticsRoute: FastifyPluginAsyncTypebox<{ upgradeUrl: string, screensReadMax: number, answers: AnswerCache, zoneRules: ZoneRulesStore }> = async (app, { upgradeUrl, screensReadMax, answers, zoneRules }) => {
  const readAsk = askHook(app, zoneRules.rules)
  const answering = { database: app.database, answers, zoneRules, screensReadMax }

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
        '- `compare=previous_period` (with `from` and `to`) adds `period` (the range\'s completions and their mean), `previous` (the same for the range moved back by as many whole weeks as it spans, weeks aligned, with its bins) and `change` (the differences).',
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
    // The query read once, a 400 before the plan guard's 403 (docs/decisions.md, "Order of checks").
    preHandler: [readAsk, requirePro(upgradeUrl)],
  }, async (request, reply): Promise<FastifyReply> => {
    const { from, to, compare } = request.query
    return await answerJobAnalytics(answering, reply, {
      organizationId: request.caller.organization.id,
      jobId: request.params.jobId,
      query: { from, to, compare },
      ask: request.analyticsAsk!,
      ifNoneMatch: request.headers['if-none-match'],
      log: request.log,
    })
  })
}

export default jobAnalyticsRoute
