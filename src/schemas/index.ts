import { JobAnalyticsSchema, WeekBinSchema } from './analytics.js'
import { JobAnalyticsEntrySchema, JobAnalyticsErrorSchema, JobsAnalyticsSchema } from './dashboard.js'
import { OrganizationAnalyticsSchema } from './organization-analytics.js'
import { AnalyticsPeriodChangeSchema, AnalyticsPeriodSchema, AnalyticsPreviousPeriodSchema } from './period-comparison.js'
import { ErrorDetail, ErrorSchema, InsufficientScopeSchema, UpgradeRequiredSchema } from './error.js'
import { JobSchema } from './job.js'
import { JobListSchema } from './job-list.js'
import { MeSchema } from './me.js'
import { WebhookEventTypeListSchema, WebhookEventTypeSchema } from './webhook-event-types.js'
import { WebhookDeliveryListSchema, WebhookDeliverySchema, WebhookEndpointCreatedSchema, WebhookEndpointListSchema, WebhookEndpointSchema, WebhookEventSchema, WebhookEventsScheduledSchema, WebhookSecretRotatedSchema, WebhookTestResultSchema } from './webhooks.js'

/** Named schemas: added once to the app, they appear under these names in components.schemas. */
export const sharedSchemas = [ErrorDetail, ErrorSchema, UpgradeRequiredSchema, InsufficientScopeSchema, JobSchema, JobListSchema, WeekBinSchema, JobAnalyticsSchema, JobAnalyticsErrorSchema, JobAnalyticsEntrySchema, JobsAnalyticsSchema, AnalyticsPeriodSchema, AnalyticsPreviousPeriodSchema, AnalyticsPeriodChangeSchema, OrganizationAnalyticsSchema, MeSchema,
  WebhookEndpointSchema, WebhookEndpointCreatedSchema, WebhookEndpointListSchema, WebhookDeliverySchema, WebhookDeliveryListSchema, WebhookSecretRotatedSchema, WebhookEventsScheduledSchema, WebhookTestResultSchema, WebhookEventSchema, WebhookEventTypeSchema, WebhookEventTypeListSchema]
