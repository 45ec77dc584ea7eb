// What a job's size costs (issue 13): per operation, the latency of a large job's request
// against the 200-screen job's, measured in the same run on the same server. The service
// reads summaries, so its ratio must stay within the pair's factor; the baseline computes on
// read, and its ratio shows what that costs. Mean latency is the figure judged: autocannon's
// percentiles are whole milliseconds, too coarse where a request takes one or two.
import { median } from './report.js'
import type { Runs } from './rounds.js'
import type { Side } from './scenarios.js'

/** Issue 13's bound for any large job. */
export const SIZE_FACTOR = 2
/** Issue 42's, for a million screens' analytics in each zone the summaries serve. */
export const MILLION_ANALYTICS_FACTOR = 1.5

const MILLION_ANALYTICS = ['analytics (1M screens)', 'analytics (1M, tz=Europe/Berlin)', 'analytics (1M, tz=America/New_York)', 'analytics (1M, tz=Asia/Kathmandu)']
const PAIRS: Array<{ small: string, large: string[] }> = [
  { small: 'get job (200 screens)', large: ['get job (100k screens)', 'get job (1M screens)'] },
  { small: 'analytics (200 screens)', large: ['analytics (100k screens)', 'analytics (100k, tz=Europe/Berlin)', ...MILLION_ANALYTICS] },
]
const factorOf = (large: string): number => (MILLION_ANALYTICS.includes(large) ? MILLION_ANALYTICS_FACTOR : SIZE_FACTOR)

interface Latency { mean: number, p50: number, p99: number }
export interface SizeRow { large: string, small: string, service: Latency, baseline: Latency, factor: number, met: boolean }

export function sizeRows (runs: Runs): SizeRow[] {
  const latency = (name: string, side: Side): Latency | undefined => {
    const ms = runs.scenarios.find(s => s.scenario.name === name)?.runs[side]
    return ms === undefined || ms.length === 0 ? undefined : { mean: median(ms.map(m => m.mean)), p50: median(ms.map(m => m.p50)), p99: median(ms.map(m => m.p99)) }
  }
  const ratio = (a: Latency, b: Latency): Latency => ({ mean: a.mean / b.mean, p50: a.p50 / b.p50, p99: a.p99 / b.p99 })
  return PAIRS.flatMap(({ small, large }) => large.map(name => {
    const [ls, ss, lb, sb] = [latency(name, 'service'), latency(small, 'service'), latency(name, 'baseline'), latency(small, 'baseline')]
    if (ls === undefined || ss === undefined || lb === undefined || sb === undefined) return []
    const service = ratio(ls, ss)
    const factor = factorOf(name)
    return [{ large: name, small, service, baseline: ratio(lb, sb), factor, met: service.mean <= factor }]
  }).flat())
}

const x = (n: number): string => (Number.isFinite(n) ? `${n < 10 ? n.toFixed(2) : n.toFixed(0)}×` : '–')

export function sizeMarkdownTable (rows: SizeRow[]): string {
  return [
    '| large job ÷ 200-screen job | service mean | p50 | p99 | baseline (on read) mean | bound | within? |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...rows.map(r => `| ${r.large} | ${x(r.service.mean)} | ${x(r.service.p50)} | ${x(r.service.p99)} | ${x(r.baseline.mean)} | ${x(r.factor)} | ${r.met ? 'yes' : 'NO'} |`),
  ].join('\n')
}
