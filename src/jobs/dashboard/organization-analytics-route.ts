import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ifNoneMatchMatches, notModified, versionedEtag } from '../../plugins/caching.js'
import { requirePro } from '../../plugins/plan-guard.js'
import { organizationAnalyticsExample } from '../../schemas/examples.js'
import { ORGANIZATION_ANALYTICS_DESCRIPTION, OrganizationAnalyticsQuery, OrganizationAnalyticsSchema } from '../../schemas/organization-analytics.js'
import { ConditionalHeaders } from '../../schemas/params.js'
import { errorResponses, notModifiedWith, okResponse, TZDATA_VERSION } from '../../schemas/responses.js'
import { version as serviceVersion } from '../../version.js'
import type { ZoneRulesStore } from '../../zones/store.js'
import { analyticsBody } from '../analytics/body.js'
import type { ComparisonWindow } from '../analytics/comparison-text.js'
import type { AnswerCache } from '../analytics/answer-cache.js'
import { askHook } from '../analytics/ask-hook.js'
import { screensReadMaxIn } from '../analytics/query.js'
import { rulesMissingAs503 } from '../analytics/rules-missing.js'
import { organizationAnalyticsText, organizationAnalyticsVersion, type JobSelection, type RollupText } from './read-organization-analytics.js'

type Request = FastifyRequest<{ Querystring: Static<typeof OrganizationAnalyticsQuery> }>

/** The rollup as JSON text: its own two figures, then the single job's body of the same counts and bins (body.ts). */
export const rollupBody = (rollup: RollupText, range?: { from: string, to: string }, window?: ComparisonWindow): string =>
  `{"job_count":${rollup.jobCount},"average_score":${rollup.averageScore ?? 'null'},` + analyticsBody(rollup, range, window).slice(1)

/** GET /api/analytics/organization (Pro): the selected jobs' screens as one job's, one statement. */
const organizationAnalyticsRoute: FastifyPluginAsyncTypebox<{ upgradeUrl: string, screensReadMax: number, answers: AnswerCache, zoneRules: ZoneRulesStore }> = async (app, { upgradeUrl, screensReadMax, answers, zoneRules }) => {
  const { rules } = zoneRules
  const readAsk = askHook(app, rules)

  app.get('/analytics/organization', {
    schema: {
      operationId: 'getOrganizationAnalytics',
      summary: 'Get the organization\'s analytics (Pro)',
      description: ORGANIZATION_ANALYTICS_DESCRIPTION,
      tags: ['Analytics'],
      security: [{ bearerAuth: ['analytics:read'] }],
      querystring: OrganizationAnalyticsQuery,
      headers: ConditionalHeaders,
      response: {
        200: okResponse(Type.Ref(OrganizationAnalyticsSchema), 'The selected jobs\' analytics, as one job\'s.', organizationAnalyticsExample, TZDATA_VERSION),
        304: notModifiedWith(TZDATA_VERSION),
        ...errorResponses([400, 401], {}, { scope: 'analytics:read', plan: true }),
      },
    },
    // As the single job's: the query read once, a 400 before the plan guard's 403.
    preHandler: [readAsk, requirePro(upgradeUrl)],
  }, async (request, reply) => await answer(request, reply))

  async function answer (request: Request, reply: FastifyReply): Promise<FastifyReply> {
    const { job_status: statuses, user_id: userId, from = '', to = '', compare } = request.query
    // Each state once, in one order: the same selection asked two ways is one ETag.
    const states = statuses === undefined ? undefined : [...new Set(statuses)].sort()
    const selection: JobSelection = { organizationId: request.caller.organization.id, ...(states !== undefined ? { statuses: states } : {}), ...(userId !== undefined ? { userId: userId.toLowerCase() } : {}) }
    const { zone, range, weeks, compare: window } = request.analyticsAsk!
    const inputs = [rules.id, zone, from, to, states?.join(',') ?? '', selection.userId ?? '', compare ?? '']
    const etagAt = (version: string): string => versionedEtag(['organization-analytics', serviceVersion, ...inputs, version])
    const conditional = request.headers['if-none-match']
    // As the single job's: the last answer to the question is kept with its version, and given
    // again after the version's read (no screen, no bin) while it holds; the question names the
    // organization, which the selection's version does not.
    const question = rules.summarizable(zone) ? ['organization', selection.organizationId, ...inputs].join('|') : undefined
    const cached = question === undefined ? undefined : answers.get(question)
    if (conditional !== undefined || cached !== undefined) {
      const current = await app.database.read(async reader => await organizationAnalyticsVersion(reader, selection, cached === undefined ? undefined : { set: rules.id, zone }))
      const etag = etagAt(current.version)
      if (conditional !== undefined && ifNoneMatchMatches(conditional, etag)) return notModified(reply.header('tzdata-version', rules.version), etag)
      if (cached?.version === current.version && current.rulesFound) return reply.header('etag', etag).header('tzdata-version', rules.version).type('application/json; charset=utf-8').send(cached.body)
    }
    await zoneRules.ready()
    const rollup = await app.database.read(async reader => await organizationAnalyticsText(reader, selection, { rules: { set: rules.id, zone }, ...(weeks !== undefined ? { weeks } : {}), ...(window !== undefined ? { compare: window } : {}), screensReadMax: screensReadMaxIn(rules, zone, screensReadMax) }))
      .catch(rulesMissingAs503(zoneRules, request.log))
    const text = rollupBody(rollup, range, window)
    const body = question !== undefined ? answers.keep(question, rollup.version, text) : text
    return reply.header('etag', etagAt(rollup.version)).header('tzdata-version', rules.version)
      .type('application/json; charset=utf-8').send(body)
  }
}

export default organizationAnalyticsRoute
