// From the rounds to the table: medians over rounds of req/s, p50 and p99 per server, the
// service/baseline throughput ratio against its target, and the p99 check (at most twice
// the baseline's).
import type { Measurement } from './load.js'
import type { Runs } from './rounds.js'

export interface Figures { requestsPerSecond: number, p50: number, p99: number, mean: number, bad: number }

export interface Row {
  scenario: string
  service: Figures
  baseline: Figures
  ratio: number
  target: number | undefined
  /** Throughput target met; undefined when there is none. */
  met: boolean | undefined
  p99Met: boolean
  suspect: boolean
}

export const P99_FACTOR = 2

export function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export function figures (runs: Measurement[]): Figures {
  return {
    requestsPerSecond: median(runs.map(m => m.requestsPerSecond)),
    p50: median(runs.map(m => m.p50)),
    p99: median(runs.map(m => m.p99)),
    mean: median(runs.map(m => m.mean)),
    bad: runs.reduce((sum, m) => sum + m.bad, 0),
  }
}

/** The main table: the scenarios measured on both servers. */
export function rows (runs: Runs): Row[] {
  return runs.scenarios.filter(({ runs: byServer }) => byServer.service.length > 0 && byServer.baseline.length > 0).map(({ scenario, runs: byServer }) => {
    const service = figures(byServer.service)
    const baseline = figures(byServer.baseline)
    const ratio = baseline.requestsPerSecond > 0 ? service.requestsPerSecond / baseline.requestsPerSecond : 0
    return {
      scenario: scenario.name,
      service,
      baseline,
      ratio,
      target: scenario.target,
      met: scenario.target === undefined ? undefined : ratio >= scenario.target,
      p99Met: service.p99 <= P99_FACTOR * baseline.p99,
      suspect: service.bad + baseline.bad > 0,
    }
  })
}

const HEADER = ['scenario', 'service req/s', 'p50 ms', 'p99 ms', 'baseline req/s', 'p50 ms', 'p99 ms', 'ratio', 'target', 'met?', `p99 ≤ ${P99_FACTOR}×`, 'note']
const RIGHT = [false, true, true, true, true, true, true, true, true, false, false, false]

const rate = (n: number): string => n.toFixed(0)
const ms = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(1))
const yesNo = (b: boolean | undefined): string => (b === undefined ? '–' : b ? 'yes' : 'NO')

function cells (row: Row): string[] {
  const note = row.suspect ? `SUSPECT: ${row.service.bad} bad answers (service), ${row.baseline.bad} (baseline)` : ''
  return [row.scenario, rate(row.service.requestsPerSecond), ms(row.service.p50), ms(row.service.p99),
    rate(row.baseline.requestsPerSecond), ms(row.baseline.p50), ms(row.baseline.p99),
    row.ratio.toFixed(2), row.target === undefined ? '–' : `≥ ${row.target.toFixed(2)}`, yesNo(row.met), yesNo(row.p99Met), note]
}

function ceilingCells (ceiling: Figures): string[] {
  const note = ceiling.bad > 0 ? `SUSPECT: ${ceiling.bad} bad answers` : 'Fastify, one constant route, no plugins'
  return ['framework ceiling', rate(ceiling.requestsPerSecond), ms(ceiling.p50), ms(ceiling.p99), '–', '–', '–', '–', '–', '–', '–', note]
}

/** The table as aligned text, for the terminal. */
export function textTable (table: Row[], ceiling: Figures): string {
  const body = [...table.map(cells), ceilingCells(ceiling)]
  const widths = HEADER.map((h, i) => Math.max(h.length, ...body.map(r => r[i]!.length)))
  const format = (r: string[]): string => r.map((c, i) => (RIGHT[i] === true ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd()
  return [format(HEADER), widths.map(w => '-'.repeat(w)).join('  '), ...body.map(format)].join('\n')
}

export function markdownTable (table: Row[], ceiling: Figures): string {
  const line = (r: string[]): string => `| ${r.join(' | ')} |`
  return [line(HEADER), line(RIGHT.map(r => (r ? '---:' : '---'))), ...table.map(r => line(cells(r))), line(ceilingCells(ceiling))].join('\n')
}

// What one request costs, from the CPU time of each server process and of PostgreSQL during
// the measurements (medians over rounds): the inputs of the capacity model in
// docs/operations.md. Per core = 1000 ÷ CPU ms per request.
export interface CostRow { scenario: string, service?: { server: number, database: number }, baseline?: { server: number, database: number } }

export function costRows (runs: Runs): CostRow[] {
  const cost = (ms: Measurement[]): { server: number, database: number } | undefined => {
    const cpu = ms.map(m => m.cpuMsPerRequest).filter(c => c !== undefined)
    return cpu.length === 0 ? undefined : { server: median(cpu.map(c => c.server)), database: median(cpu.map(c => c.database)) }
  }
  return runs.scenarios.map(({ scenario, runs: byServer }) => {
    const service = cost(byServer.service)
    const baseline = cost(byServer.baseline)
    return { scenario: scenario.name, ...(service !== undefined ? { service } : {}), ...(baseline !== undefined ? { baseline } : {}) }
  })
}

const COST_HEADER = ['scenario', 'service CPU ms/req', 'service req/s per core', 'PostgreSQL CPU ms/req', 'baseline CPU ms/req', 'baseline PostgreSQL ms/req']
const cpuMs = (n: number | undefined): string => (n === undefined ? '–' : n.toFixed(3))
const costCells = (r: CostRow): string[] => [r.scenario, cpuMs(r.service?.server), r.service === undefined || r.service.server <= 0 ? '–' : (1000 / r.service.server).toFixed(0),
  cpuMs(r.service?.database), cpuMs(r.baseline?.server), cpuMs(r.baseline?.database)]

export function costTextTable (cost: CostRow[]): string {
  const body = cost.map(costCells)
  const widths = COST_HEADER.map((h, i) => Math.max(h.length, ...body.map(r => r[i]!.length)))
  const format = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd()
  return [format(COST_HEADER), widths.map(w => '-'.repeat(w)).join('  '), ...body.map(format)].join('\n')
}

export function costMarkdownTable (cost: CostRow[]): string {
  const line = (r: string[]): string => `| ${r.join(' | ')} |`
  return [line(COST_HEADER), line(COST_HEADER.map((_, i) => (i === 0 ? '---' : '---:'))), ...cost.map(r => line(costCells(r)))].join('\n')
}
