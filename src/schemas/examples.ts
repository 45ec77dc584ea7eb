import type { JobAnalytics } from './analytics.js'
import type { JobsAnalytics } from './dashboard.js'
import type { Job } from './job.js'
import type { Me } from './me.js'
import type { OrganizationAnalytics } from './organization-analytics.js'
import type { WebhookDelivery, WebhookEndpoint } from './webhooks.js'

// Examples in the OpenAPI document: shaped like the demo data, checked against their
// schemas by test/openapi/openapi.test.ts.

export const jobExample: Job = {
  id: '91c1b009-4099-5628-9d13-3aaeb0acf3e9',
  user_id: '6bf376cc-1378-570d-abbe-47de199a08c8',
  title: 'Senior Backend Engineer',
  company_name: 'Acme Corp',
  description: 'Acme Corp is hiring a Senior Backend Engineer.',
  status: 'active',
  slug: 'acme-senior-backend-engineer',
  share_token: '4e814287943f0d775f21f1372c1004e07a65121d1000fa92635f7bcfc10e4dd4',
  logo_url: 'https://cdn.acme.example/logo.png',
  brand_color: '#0f62fe',
  show_service_branding: false,
  eu_candidates_allowed: true,
  question_count: 5,
  interview_count: 80,
  average_score: 72.4,
  created_at: '2026-06-25T00:00:00.000Z',
  updated_at: '2026-06-28T00:00:00.000Z',
}

export const analyticsExample: JobAnalytics = {
  completion_rate: 60,
  average_score_by_week: [
    { week: '2026-10-12', average_score: 74.1, count: 6 },
    { week: '2026-10-19', average_score: null, count: 4 },
  ],
  interviews_by_status: { completed: 48, in_progress: 13, expired: 19 },
  total_interviews: 80,
}

export const meExample: Me = {
  user: { id: '6bf376cc-1378-570d-abbe-47de199a08c8', email: 'alice@acme.example', name: 'Alice Pro', created_at: '2026-04-16T00:00:00.000Z' },
  organization: { id: '63c5e5b7-1367-522b-835f-fca30d41cda8', name: 'Acme Recruiting' },
  subscription: { plan: 'pro', status: 'active', current_period_end: '2036-01-01T00:00:00.000Z' },
  entitlements: { analytics: true, branding: true },
  scopes: ['jobs:read', 'analytics:read'],
}

export const webhookEndpointExample: WebhookEndpoint = {
  id: '0b5cd0a4-4c9d-4e8a-9a6e-6d1f2b3c4d5e',
  url: 'https://partner.example/hooks/screening',
  events: ['job.updated', 'job.deleted'],
  description: 'Our ATS mirror',
  status: 'enabled',
  disabled_reason: null,
  created_at: '2026-11-27T09:00:00.000Z',
  updated_at: '2026-11-27T09:00:00.000Z',
}

export const webhookSecretExample = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8eZ4VoXtkUg='

export const webhookDeliveryExample: WebhookDelivery = {
  id: '5f0e5c1a-7d2b-4a0e-9c1b-2e3d4f5a6b7c',
  event_id: 'msg_2a9QmX0fW3p7Lr8sTzKc1VbN4yHd6EgJ',
  event_type: 'job.updated',
  job_id: '91c1b009-4099-5628-9d13-3aaeb0acf3e9',
  attempt: 1,
  outcome: 'delivered',
  status_code: 204,
  error: null,
  duration_ms: 38,
  attempted_at: '2026-11-27T09:00:01.250Z',
  next_attempt_at: null,
  trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
}

export const jobsAnalyticsExample: JobsAnalytics = {
  jobs: [
    { job_id: '91c1b009-4099-5628-9d13-3aaeb0acf3e9', analytics: analyticsExample },
    { job_id: '2b7e07e1-8f3c-5d2a-9c1e-6a4f0b3d9e21', error: { code: 'not_found', message: 'No such job in the caller\'s organization.' } },
  ],
}

export const organizationAnalyticsExample: OrganizationAnalytics = {
  job_count: 6,
  average_score: 71.25,
  completion_rate: 58,
  average_score_by_week: [
    { week: '2026-10-12', average_score: 72.5, count: 14 },
    { week: '2026-10-19', average_score: 69.4, count: 9 },
  ],
  interviews_by_status: { completed: 140, in_progress: 52, expired: 48 },
  total_interviews: 240,
}
