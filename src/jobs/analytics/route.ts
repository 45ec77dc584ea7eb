import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { jobNotFound } from '../../errors.js'
import { ifNoneMatchMatches, notModified, versionedEtag } from '../../plugins/caching.js'
import { requirePro } from '../../plugins/plan-guard.js'
import { AnalyticsQuery, JobAnalyticsSchema } from '../../schemas/analytics.js'
import { analyticsExample } from '../../schemas/examples.js'
import { ConditionalHeaders, JobParams } from '../../schemas/params.js'
import { errorResponses, notModifiedWith, okResponse, TZDATA_VERSION } from '../../schemas/responses.js'
import { version as serviceVersion } from '../../version.js'
import type { ZoneRulesStore } from '../../zones/store.js'
import { jobQuestion, type AnswerCache } from './answer-cache.js'
import { analyticsBody } from './body.js'
import { askHook } from './ask-hook.js'
import { screensReadMaxIn } from './query.js'
import { analyticsVersion, jobAnalyticsText } from './read.js'
import { rulesMissingAs503 } from './rules-missing.js'

/**
 * GET /api/jobs/{jobId}/analytics (Pro): a job's figures and weekly bins in a zone, by the
 * service's zone rules (`zoneRules`: src/zones/).
 */
const jobAnalyticsRoute: FastifyPluginAsyncTypebox<{ upgradeUrl: string, screensReadMax: number, answers: AnswerCache, zoneRules: ZoneRulesStore }> = async (app, { upgradeUrl, screensReadMax, answers, zoneRules }) => {
  const { rules } = zoneRules
  const readAsk = askHook(app, rules)

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
    const organizationId = request.caller.organization.id
    const { jobId } = request.params
    const { from, to, compare: comparing } = request.query
    // The zone the name stands for in the service's rules: the statement computes with its
    // rules, and the ETag names them and it.
    const { zone, range, weeks, compare } = request.analyticsAsk!
    // The ETag names the job's summary version and every input of the answer (the service
    // version too: a release may compute the same data differently; and the rules' id: two
    // instances on two tzdata releases never give one ETag for two answers), so that a poll
    // whose data did not change is answered from the version alone, one read of at most 8 rows.
    const etagAt = (summaries: string): string => versionedEtag(['analytics', serviceVersion, jobId, summaries, rules.id, zone, from ?? '', to ?? '', comparing ?? ''])
    const conditional = request.headers['if-none-match']
    // The question without the version: the ETag's other inputs (the release is this process's).
    // Not kept in a zone the summaries cannot place: its weeks come from the screens, and a
    // completion moved within its quarter hour can change them without changing the version.
    const keepable = rules.summarizable(zone)
    const question = jobQuestion(jobId, rules.id, zone, from, to, comparing)
    const cached = keepable ? answers.get(question) : undefined
    if (conditional !== undefined || cached !== undefined) {
      const current = await app.database.read(async reader => await analyticsVersion(reader, organizationId, jobId, cached === undefined ? undefined : { set: rules.id, zone }))
      if (current === null) throw jobNotFound()
      const etag = etagAt(current.version)
      if (conditional !== undefined && ifNoneMatchMatches(conditional, etag)) return notModified(reply.header('tzdata-version', rules.version), etag)
      // Rules gone from the database: computed below, which notices it.
      if (cached?.version === current.version && current.rulesFound) return reply.header('etag', etag).header('tzdata-version', rules.version).type('application/json; charset=utf-8').send(cached.body)
    }
    await zoneRules.ready()
    const readMax = screensReadMaxIn(rules, zone, screensReadMax)
    const rows = await app.database.read(async reader => await jobAnalyticsText(reader, organizationId, jobId, { rules: { set: rules.id, zone }, ...(weeks !== undefined ? { weeks } : {}), ...(compare !== undefined ? { compare } : {}), screensReadMax: readMax }))
      .catch(rulesMissingAs503(zoneRules, request.log))
    if (rows === null) throw jobNotFound()
    // Written here rather than by the schema's serializer: the bins' numbers are copied from
    // the statement's text, not parsed and written again (body.ts).
    const text = analyticsBody(rows, range, compare)
    const body = keepable ? answers.keep(question, rows.version, text) : text
    return reply.header('etag', etagAt(rows.version)).header('tzdata-version', rules.version)
      .type('application/json; charset=utf-8').send(body)
  })
}

export default jobAnalyticsRoute
