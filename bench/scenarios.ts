// The measured scenarios. Names are stable: they key the targets and the results files.
// Requests are per server only because the 304's ETag and the page-20 cursor come from each
// server's own answers (the equality check has shown them identical).
import type { Dataset } from './dataset.js'

export type Side = 'service' | 'baseline'
export const SIDES: Side[] = ['service', 'baseline']

export interface LoadRequest { path: string, headers?: Record<string, string> }

export interface Scenario {
  name: string
  /** Minimum service/baseline throughput ratio; undefined: no target. */
  target: number | undefined
  /** What each server is asked in turn; none: that server is not measured (and the scenario is not in the main table). */
  requests: Record<Side, LoadRequest[]>
}

export interface Paths {
  smallJob: string
  bigJob: string
  smallAnalytics: string
  bigAnalytics: string
  bigAnalyticsBerlin: string
  hugeJob: string
  hugeAnalytics: string
  hugeAnalyticsKathmandu: string
  hugeAnalyticsBerlin: string
  hugeAnalyticsNewYork: string
  firstPage: string
}

export const LIST_LIMIT = 20
export const LIST_PAGES = 20

export function pathsOf (dataset: Dataset): Paths {
  return {
    smallJob: `/api/jobs/${dataset.smallJobId}`,
    bigJob: `/api/jobs/${dataset.bigJobId}`,
    smallAnalytics: `/api/jobs/${dataset.smallJobId}/analytics`,
    bigAnalytics: `/api/jobs/${dataset.bigJobId}/analytics`,
    bigAnalyticsBerlin: `/api/jobs/${dataset.bigJobId}/analytics?tz=Europe/Berlin`,
    hugeJob: `/api/jobs/${dataset.hugeJobId}`,
    hugeAnalytics: `/api/jobs/${dataset.hugeJobId}/analytics`,
    // A zone 5:45 from UTC: its week boundaries fall between whole hours of the boundary windows.
    hugeAnalyticsKathmandu: `/api/jobs/${dataset.hugeJobId}/analytics?tz=Asia/Kathmandu`,
    // The zones the summaries serve whose weeks move with daylight saving (issue 42).
    hugeAnalyticsBerlin: `/api/jobs/${dataset.hugeJobId}/analytics?tz=Europe/Berlin`,
    hugeAnalyticsNewYork: `/api/jobs/${dataset.hugeJobId}/analytics?tz=America/New_York`,
    firstPage: `/api/jobs?limit=${LIST_LIMIT}`,
  }
}

export const nextPage = (cursor: string): string => `/api/jobs?limit=${LIST_LIMIT}&cursor=${encodeURIComponent(cursor)}`

/** What the equality check found on each server, for the scenarios that need it. */
export interface Probe {
  /** ETag of the 200-screen job. */
  etag: Record<Side, string>
  /** The cursor that fetches page LIST_PAGES. */
  lastCursor: Record<Side, string>
  /** ETag of the 1M-screen job's analytics: the service's names a version, the baseline's hashes the body. */
  hugeAnalyticsEtag: Record<Side, string>
}

export function scenarios (paths: Paths, probe: Probe): Scenario[] {
  const same = (...requests: LoadRequest[]): Record<Side, LoadRequest[]> => ({ service: requests, baseline: requests })
  const perSide = (make: (side: Side) => LoadRequest[]): Record<Side, LoadRequest[]> => ({ service: make('service'), baseline: make('baseline') })
  const conditional = (side: Side): LoadRequest => ({ path: paths.smallJob, headers: { 'if-none-match': probe.etag[side] } })
  const conditionalAnalytics = (side: Side): LoadRequest => ({ path: paths.hugeAnalytics, headers: { 'if-none-match': probe.hugeAnalyticsEtag[side] } })
  return [
    { name: 'get job (200 screens)', target: 0.85, requests: same({ path: paths.smallJob }) },
    { name: 'get job (100k screens)', target: 0.9, requests: same({ path: paths.bigJob }) },
    { name: 'analytics (200 screens)', target: 0.8, requests: same({ path: paths.smallAnalytics }) },
    { name: 'analytics (100k screens)', target: 0.9, requests: same({ path: paths.bigAnalytics }) },
    { name: 'analytics (100k, tz=Europe/Berlin)', target: 0.9, requests: same({ path: paths.bigAnalyticsBerlin }) },
    // Issue 13: the service answers from summaries, the baseline from the screens (on read).
    { name: 'get job (1M screens)', target: 0.9, requests: same({ path: paths.hugeJob }) },
    { name: 'analytics (1M screens)', target: 0.9, requests: same({ path: paths.hugeAnalytics }) },
    { name: 'analytics (1M, tz=Asia/Kathmandu)', target: 0.9, requests: same({ path: paths.hugeAnalyticsKathmandu }) },
    { name: 'analytics (1M, tz=Europe/Berlin)', target: 0.9, requests: same({ path: paths.hugeAnalyticsBerlin }) },
    { name: 'analytics (1M, tz=America/New_York)', target: 0.9, requests: same({ path: paths.hugeAnalyticsNewYork }) },
    { name: 'list first page', target: 0.8, requests: same({ path: paths.firstPage }) },
    { name: `list page ${LIST_PAGES}`, target: 0.8, requests: perSide(side => [{ path: nextPage(probe.lastCursor[side]) }]) },
    { name: '304 conditional get', target: undefined, requests: perSide(side => [conditional(side)]) },
    // The service answers from the job's summary version; the baseline, like the service
    // before issue 13, computes the body to compare ETags.
    { name: '304 analytics (1M screens)', target: undefined, requests: perSide(side => [conditionalAnalytics(side)]) },
    // A dashboard's calls in turn on each connection.
    {
      name: 'dashboard mix',
      target: undefined,
      requests: perSide(side => [conditional(side), { path: paths.bigJob }, { path: paths.smallAnalytics }, { path: paths.firstPage }]),
    },
  ]
}
