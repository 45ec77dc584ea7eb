import type { Job } from '../../schemas/job.js'
import type { JobWithStats } from './job-rows.js'

/** The API's Job object from a stored job and its counts. */
export function presentJob ({ job, questionCount, interviewCount, averageScore }: JobWithStats): Job {
  return {
    id: job.id,
    user_id: job.userId,
    title: job.title,
    company_name: job.companyName,
    description: job.description,
    status: job.status,
    slug: job.slug,
    share_token: job.shareToken,
    logo_url: job.logoUrl,
    brand_color: job.brandColor,
    show_service_branding: job.showServiceBranding,
    eu_candidates_allowed: job.euCandidatesAllowed,
    question_count: questionCount,
    interview_count: interviewCount,
    average_score: averageScore,
    created_at: job.createdAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
  }
}
