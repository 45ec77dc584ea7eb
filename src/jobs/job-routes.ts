import type { FastifyPluginAsync } from 'fastify'
import type { ZoneRulesStore } from '../zones/store.js'
import { AnswerCache } from './analytics/answer-cache.js'
import jobAnalyticsRoute from './analytics/route.js'
import jobsAnalyticsRoute from './dashboard/jobs-analytics-route.js'
import organizationAnalyticsRoute from './dashboard/organization-analytics-route.js'
import getJobRoute from './job/route.js'
import listJobsRoute from './list/route.js'

// The jobs' routes, each in the folder of what it reads: a job (job/), its analytics
// (analytics/), many jobs' analytics and the organization's rollup for a dashboard (dashboard/), the organization's jobs
// and what changed since a sync token (list/, sync/).
// Registered in the order the OpenAPI document lists them.

export interface JobRoutesOptions {
  cursorSecret: string | undefined
  upgradeUrl: string
  screensReadMax: number
  /** ANALYTICS_CACHE_BYTES: analytics answers kept, to be given again while the job's figures are unchanged. */
  answerCacheBytes: number
  zoneRules: ZoneRulesStore
}

const jobRoutes: FastifyPluginAsync<JobRoutesOptions> = async (app, { cursorSecret, upgradeUrl, screensReadMax, answerCacheBytes, zoneRules }) => {
  // One budget for the three analytics operations: a batch's entries are the single job's answers.
  const answers = new AnswerCache(answerCacheBytes)
  await app.register(getJobRoute)
  await app.register(jobAnalyticsRoute, { upgradeUrl, screensReadMax, answers, zoneRules })
  await app.register(jobsAnalyticsRoute, { upgradeUrl, screensReadMax, answers, zoneRules })
  await app.register(organizationAnalyticsRoute, { upgradeUrl, screensReadMax, answers, zoneRules })
  await app.register(listJobsRoute, { cursorSecret })
}

export default jobRoutes
