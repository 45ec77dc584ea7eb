import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ifNoneMatchMatches, notModified, versionedEtag } from '../../plugins/caching.js'
import { requirePro } from '../../plugins/plan-guard.js'
import { JOBS_ANALYTICS_DESCRIPTION, JobsAnalyticsQuery, JobsAnalyticsSchema } from '../../schemas/dashboard.js'
import { jobsAnalyticsExample } from '../../schemas/examples.js'
import { ConditionalHeaders } from '../../schemas/params.js'
import { errorResponses, notModifiedWith, okResponse, TZDATA_VERSION } from '../../schemas/responses.js'
import { version as serviceVersion } from '../../version.js'
import type { ZoneRulesStore } from '../../zones/store.js'
import { jobQuestion, type AnswerCache } from '../analytics/answer-cache.js'
import { askHook } from '../analytics/ask-hook.js'
import { screensReadMaxIn } from '../analytics/query.js'
import { rulesMissingAs503 } from '../analytics/rules-missing.js'
import { computedAnalytics, distinctIds, jobsAnalyticsBody, versionsOf } from './jobs-analytics-answer.js'
import { jobsAnalyticsText, jobsAnalyticsVersions } from './read-jobs-analytics.js'

type Request = FastifyRequest<{ Querystring: Static<typeof JobsAnalyticsQuery> }>

export interface JobsAnalyticsOptions { upgradeUrl: string, screensReadMax: number, answers: AnswerCache, zoneRules: ZoneRulesStore }

/** GET /api/analytics/jobs (Pro): many jobs' analytics, one statement, one snapshot. */
const jobsAnalyticsRoute: FastifyPluginAsyncTypebox<JobsAnalyticsOptions> = async (app, { upgradeUrl, screensReadMax, answers, zoneRules }) => {
  const { rules } = zoneRules
  const readAsk = askHook(app, rules)

  app.get('/analytics/jobs', {
    schema: {
      operationId: 'getJobsAnalytics',
      summary: 'Get many jobs\' analytics (Pro)',
      description: JOBS_ANALYTICS_DESCRIPTION,
      tags: ['Analytics'],
      security: [{ bearerAuth: ['analytics:read'] }],
      querystring: JobsAnalyticsQuery,
      headers: ConditionalHeaders,
      response: {
        200: okResponse(Type.Ref(JobsAnalyticsSchema), 'Each asked job\'s analytics, or why there is none.', jobsAnalyticsExample, TZDATA_VERSION),
        304: notModifiedWith(TZDATA_VERSION),
        ...errorResponses([400, 401], {}, { scope: 'analytics:read', plan: true }),
      },
    },
    // As the single job's: the query read once, a 400 before the plan guard's 403.
    preHandler: [readAsk, requirePro(upgradeUrl)],
  }, async (request, reply) => await answer(request, reply))

  async function answer (request: Request, reply: FastifyReply): Promise<FastifyReply> {
    const organizationId = request.caller.organization.id
    const ids = distinctIds(request.query.job_id)
    const { zone, range, weeks, compare } = request.analyticsAsk!
    const { from = '', to = '', compare: comparing = '' } = request.query
    // Every input of the answer, and each job's version (`-` for one not the caller's).
    const etagAt = (versions: string[]): string => versionedEtag(['jobs-analytics', serviceVersion, rules.id, zone, from, to, comparing, ...ids, ...versions])
    const conditional = request.headers['if-none-match']
    // Each entry is the single job's answer, so the answers kept for its question
    // (answer-cache.ts) serve: all kept, one read of the versions (as a 304's) gives them. The
    // whole body is kept too, under its ETag: asked again, it is sent as it is (no copy of 50 answers).
    const questions = rules.summarizable(zone) ? ids.map(id => jobQuestion(id, rules.id, zone, from, to, comparing)) : undefined
    const batchQuestion = questions === undefined ? undefined : ['jobs', organizationId, rules.id, zone, from, to, comparing, ...ids].join('|')
    const keptBatch = batchQuestion === undefined ? undefined : answers.get(batchQuestion)
    const kept = questions?.map(question => answers.get(question))
    const allKept = kept?.every(answer => answer !== undefined) === true
    if (conditional !== undefined || allKept || keptBatch !== undefined) {
      const { versions, rulesFound } = await app.database.read(async reader => await jobsAnalyticsVersions(reader, organizationId, ids, allKept || keptBatch !== undefined ? { set: rules.id, zone } : undefined))
      const etag = etagAt(versions.map(version => version ?? '-'))
      if (conditional !== undefined && ifNoneMatchMatches(conditional, etag)) return notModified(reply.header('tzdata-version', rules.version), etag)
      const send = (body: Buffer): FastifyReply => reply.header('etag', etag).header('tzdata-version', rules.version).type('application/json; charset=utf-8').send(body)
      if (keptBatch?.version === etag && rulesFound) return send(keptBatch.body)
      if (allKept && rulesFound && versions.every((version, i) => version === null || version === kept![i]!.version)) {
        return send(answers.keep(batchQuestion!, etag, jobsAnalyticsBody(ids.map((jobId, i) => ({ jobId, found: versions[i] })), (_, i) => kept![i]!.body)))
      }
    }
    await zoneRules.ready()
    const options = { rules: { set: rules.id, zone }, ...(weeks !== undefined ? { weeks } : {}), ...(compare !== undefined ? { compare } : {}), screensReadMax: screensReadMaxIn(rules, zone, screensReadMax) }
    // Else one statement: the figures of the jobs whose kept answer (if any) is not of the version it reads.
    const jobs = await app.database.read(async reader => await jobsAnalyticsText(reader, organizationId, ids, options, kept?.map(answer => answer?.version ?? '')))
      .catch(rulesMissingAs503(zoneRules, request.log))
    const compute = computedAnalytics(range, compare)
    const body = jobsAnalyticsBody(jobs, (found, i) => {
      if (jobs[i]!.known) return kept![i]!.body
      const text = compute(found)
      return questions !== undefined ? answers.keep(questions[i]!, found.version, text) : Buffer.from(text)
    })
    const etag = etagAt(versionsOf(jobs))
    return reply.header('etag', etag).header('tzdata-version', rules.version)
      .type('application/json; charset=utf-8').send(batchQuestion === undefined ? body : answers.keep(batchQuestion, etag, body))
  }
}

export default jobsAnalyticsRoute
