// The bodies, key for key in the order of the service's response schemas (src/schemas/*.ts):
// Fastify serializes in the schema's property order, not the handler's. Numbers and strings
// go through JSON.stringify, which writes them as the service's serializer does.
import type { AnalyticsRow, JobRow } from './queries.js'

export function job (row: JobRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    title: row.title,
    company_name: row.company_name,
    description: row.description,
    status: row.status,
    slug: row.slug,
    share_token: row.share_token,
    logo_url: row.logo_url,
    brand_color: row.brand_color,
    show_service_branding: row.show_service_branding,
    eu_candidates_allowed: row.eu_candidates_allowed,
    question_count: row.question_count,
    interview_count: row.interview_count,
    average_score: row.average_score,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** round(100 × completed / total), halves up, in integers; 0 with no screens. */
const completionRate = (completed: number, total: number): number =>
  total <= 0 ? 0 : Math.floor((200 * completed + total) / (2 * total))

export function analytics (row: AnalyticsRow) {
  const weeks = row.weeks ?? []
  const total = row.completed + row.in_progress + row.expired
  return {
    completion_rate: completionRate(row.completed, total),
    // WeekBin's schema order: week, average_score, count.
    average_score_by_week: weeks.map((week, i) => ({ week, average_score: row.averages?.[i] ?? null, count: row.counts?.[i] ?? 0 })),
    interviews_by_status: { completed: row.completed, in_progress: row.in_progress, expired: row.expired },
    total_interviews: total,
  }
}
