// A dashboard of the organization's 50 newest jobs: one page of the list, then all their
// analytics in one call and one snapshot (2 requests, where one per job would be 51), and
// the organization's own totals over its active jobs (one more), and its last 28 days beside
// the weeks before them (one more).
import { createScreeningClient } from '@screening/read-api'

const api = createScreeningClient({ baseUrl: process.env.SCREENING_API_URL!, apiKey: process.env.SCREENING_API_KEY! })

const page = await api.listJobs({ limit: 50 })
const titles = new Map(page.data.map(job => [job.id, job.title]))
const { jobs } = await api.getJobsAnalytics([...titles.keys()], { tz: 'Europe/Berlin' })

for (const entry of jobs) {
  const title = titles.get(entry.job_id)
  if ('error' in entry) {
    console.log(`${title}: ${entry.error.code}`) // deleted since the list was read
    continue
  }
  const { completion_rate: rate, total_interviews: total, average_score_by_week: weeks } = entry.analytics
  const last = weeks.at(-1)
  console.log(`${title}: ${rate}% of ${total} screens completed; latest week ${last?.week ?? 'none'}, average ${last?.average_score?.toFixed(1) ?? '-'}`)
}

const org = await api.getOrganizationAnalytics({ tz: 'Europe/Berlin', job_status: ['active'] })
console.log(`organization: ${org.job_count} active jobs, ${org.completion_rate}% of ${org.total_interviews} screens completed, average score ${org.average_score?.toFixed(1) ?? '-'}`)

// The weeks of the 28 days to today beside as many weeks before them: completions, their mean, the change.
const day = (daysAgo: number): string => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10)
const recent = await api.getOrganizationAnalytics({ tz: 'Europe/Berlin', from: day(27), to: day(0), compare: 'previous_period' })
const signed = (n: number): string => (n >= 0 ? '+' : '') + n.toFixed(1)
console.log(`last 28 days: ${recent.period!.completed} completed (${recent.change!.completed >= 0 ? '+' : ''}${recent.change!.completed} against the ${recent.previous!.from}..${recent.previous!.to} before), average ${recent.period!.average_score?.toFixed(1) ?? '-'} (${recent.change!.average_score === null ? 'no change to tell' : signed(recent.change!.average_score)})`)
