// The measurements: per round, per scenario, the service then the baseline (interleaved, so
// that drift on the machine hits both alike), each after a discarded warm-up; the ceiling
// once per round.
import { perRequest, sampleCpu } from './cpu.js'
import { measure, type LoadSettings, type Measurement } from './load.js'
import { SIDES, type LoadRequest, type Scenario, type Side } from './scenarios.js'
import { assertAlive, type NodeBinary, type Server } from './servers.js'

export interface ScenarioRuns { scenario: Scenario, runs: Record<Side, Measurement[]> }
export interface Runs { scenarios: ScenarioRuns[], ceiling: Measurement[] }

export interface RoundSettings { rounds: number, duration: number, warmup: number, connections: number, apiKey: string }

const CEILING: LoadRequest[] = [{ path: '/ceiling' }]

function line (round: string, name: string, who: string, m: Measurement): string {
  const bad = m.bad > 0 ? `  SUSPECT: ${m.bad} bad (statuses ${JSON.stringify(m.statusCodes)}, errors ${m.errors}, timeouts ${m.timeouts})` : ''
  return `  ${round} ${name.padEnd(36)} ${who.padEnd(8)} ${m.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${String(m.p50).padStart(4)} ms  p99 ${String(m.p99).padStart(4)} ms${bad}`
}

export async function runRounds (node: NodeBinary, servers: Record<Side | 'ceiling', Server>, scenarios: Scenario[], settings: RoundSettings): Promise<Runs> {
  const load: LoadSettings = { seconds: settings.duration, connections: settings.connections, headers: { authorization: `Bearer ${settings.apiKey}` } }
  const warm: LoadSettings = { ...load, seconds: settings.warmup }
  const once = async (server: Server, requests: LoadRequest[]): Promise<Measurement> => {
    assertAlive(server)
    await measure(node, server.url, requests, warm)
    const before = sampleCpu(server.child.process.pid)
    const m = await measure(node, server.url, requests, load)
    const cpu = perRequest(before, sampleCpu(server.child.process.pid), m.total)
    assertAlive(server)
    return cpu === undefined ? m : { ...m, cpuMsPerRequest: cpu }
  }

  const results: Runs = { scenarios: scenarios.map(scenario => ({ scenario, runs: { service: [], baseline: [] } })), ceiling: [] }
  for (let r = 1; r <= settings.rounds; r++) {
    const round = `[${r}/${settings.rounds}]`
    for (const entry of results.scenarios) {
      for (const side of SIDES) {
        // A scenario of one server only (the sync pages: the baseline has no sync).
        if (entry.scenario.requests[side].length === 0) continue
        const m = await once(servers[side], entry.scenario.requests[side])
        entry.runs[side].push(m)
        console.log(line(round, entry.scenario.name, side, m))
      }
    }
    const m = await once(servers.ceiling, CEILING)
    results.ceiling.push(m)
    console.log(line(round, 'framework ceiling', 'ceiling', m))
  }
  return results
}
