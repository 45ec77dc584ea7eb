import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import type { Database } from '../../db/database.js'
import { jobNotFound } from '../../errors.js'
import { ifNoneMatchMatches, notModified, versionedEtag } from '../../plugins/caching.js'
import { version as serviceVersion } from '../../version.js'
import type { ZoneRulesStore } from '../../zones/store.js'
import { jobQuestion, type AnswerCache } from './answer-cache.js'
import { analyticsBody } from './body.js'
import { screensReadMaxIn, type AnalyticsAsk } from './query.js'
import { analyticsVersion, jobAnalyticsText } from './read.js'
import { rulesMissingAs503 } from './rules-missing.js'

// GET /api/jobs/{jobId}/analytics's answer (route.ts): a 304 or a kept answer from the job's
// version alone when they can be, else the statement's, kept for the next time.

export interface Answering { database: Database, answers: AnswerCache, zoneRules: ZoneRulesStore, screensReadMax: number }

export interface JobAnalyticsAsked {
  organizationId: string
  jobId: string
  /** The query as sent: the ETag names it. */
  query: { from: string | undefined, to: string | undefined, compare: string | undefined }
  /** The query as read (ask-hook.ts): the zone the name stands for in the service's rules, the range, its weeks. */
  ask: AnalyticsAsk
  ifNoneMatch: string | undefined
  log: FastifyBaseLogger
}

export async function answerJobAnalytics ({ database, answers, zoneRules, screensReadMax }: Answering, reply: FastifyReply, asked: JobAnalyticsAsked): Promise<FastifyReply> {
  const { rules } = zoneRules
  const { organizationId, jobId, query: { from, to, compare: comparing }, ask: { zone, range, weeks, compare }, ifNoneMatch } = asked
  // The ETag names the job's summary version and every input of the answer (the service
  // version too: a release may compute the same data differently; and the rules' id: two
  // instances on two tzdata releases never give one ETag for two answers), so that a poll
  // whose data did not change is answered from the version alone, one read of at most 8 rows.
  const etagAt = (summaries: string): string => versionedEtag(['analytics', serviceVersion, jobId, summaries, rules.id, zone, from ?? '', to ?? '', comparing ?? ''])
  // The question without the version: the ETag's other inputs (the release is this process's).
  // Not kept in a zone the summaries cannot place: its weeks come from the screens, and a
  // completion moved within its quarter hour can change them without changing the version.
  const keepable = rules.summarizable(zone)
  const question = jobQuestion(jobId, rules.id, zone, from, to, comparing)
  const cached = keepable ? answers.get(question) : undefined
  if (ifNoneMatch !== undefined || cached !== undefined) {
    const current = await database.read(async reader => await analyticsVersion(reader, organizationId, jobId, cached === undefined ? undefined : { set: rules.id, zone }))
    if (current === null) throw jobNotFound()
    const etag = etagAt(current.version)
    if (ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag)) return notModified(reply.header('tzdata-version', rules.version), etag)
    // Rules gone from the database: computed below, which notices it.
    if (cached?.version === current.version && current.rulesFound) return reply.header('etag', etag).header('tzdata-version', rules.version).type('application/json; charset=utf-8').send(cached.body)
  }
  await zoneRules.ready()
  const readMax = screensReadMaxIn(rules, zone, screensReadMax)
  const rows = await database.read(async reader => await jobAnalyticsText(reader, organizationId, jobId, { rules: { set: rules.id, zone }, ...(weeks !== undefined ? { weeks } : {}), ...(compare !== undefined ? { compare } : {}), screensReadMax: readMax }))
    .catch(rulesMissingAs503(zoneRules, asked.log))
  if (rows === null) throw jobNotFound()
  // Written here rather than by the schema's serializer: the bins' numbers are copied from
  // the statement's text, not parsed and written again (body.ts).
  const text = analyticsBody(rows, range, compare)
  const body = keepable ? answers.keep(question, rows.version, text) : text
  return reply.header('etag', etagAt(rows.version)).header('tzdata-version', rules.version)
    .type('application/json; charset=utf-8').send(body)
}
