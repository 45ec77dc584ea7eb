// CPU time spent by a server process and by PostgreSQL during a measurement, from /proc:
// what one request costs each side, the figure a capacity model needs (req/s alone mixes
// both, and the load generator, on one small machine). Linux only; elsewhere undefined.
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

let tickMs: number | undefined
function msPerTick (): number {
  tickMs ??= 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
  return tickMs
}

/**
 * utime + stime of one process, in ms, plus with `children` the time of its children that
 * have exited (cutime + cstime); undefined when it cannot be read.
 */
function processCpuMs (pid: number, children = false, file = `/proc/${pid}/stat`): number | undefined {
  try {
    const stat = readFileSync(file, 'utf8')
    // Fields after the command name, which may hold spaces: state is the first.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number)
    return (fields[11]! + fields[12]! + (children ? fields[13]! + fields[14]! : 0)) * msPerTick()
  } catch {
    return undefined
  }
}

/**
 * Every `postgres` process on the machine (the server the bench uses, on a dedicated
 * machine), with the time of those that exited: backends come and go (a pool closes idle
 * connections, autovacuum workers end), and the postmaster collects their time when it
 * reaps them, so the sum only grows. With BENCH_POSTMASTER_PID (the first line of the
 * cluster's postmaster.pid), only that postmaster and its children: on a machine where
 * another cluster runs too.
 */
function postgresCpuMs (): number {
  let total = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue
      const only = process.env.BENCH_POSTMASTER_PID
      if (only !== undefined && only !== '' && entry !== only) {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
        if (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] !== only) continue
      }
    } catch {
      continue
    }
    total += processCpuMs(Number(entry), true) ?? 0
  }
  return total
}

/** The main thread's CPU ms alone: the rest of a Node process's is V8's helpers (GC, compilers) and libuv's pool. */
export const mainThreadCpuMs = (pid: number): number | undefined => processCpuMs(pid, false, `/proc/${pid}/task/${pid}/stat`)

export interface CpuSample { server: number, database: number }

export function sampleCpu (pid: number | undefined): CpuSample | undefined {
  if (process.platform !== 'linux' || pid === undefined) return undefined
  const server = processCpuMs(pid)
  return server === undefined ? undefined : { server, database: postgresCpuMs() }
}

/** CPU ms per request between two samples. */
export function perRequest (before: CpuSample | undefined, after: CpuSample | undefined, requests: number): CpuSample | undefined {
  if (before === undefined || after === undefined || requests === 0) return undefined
  return { server: (after.server - before.server) / requests, database: (after.database - before.database) / requests }
}

/** The machine's busy CPU (every core, idle and iowait left out) in ms since boot, and its cores, from /proc/stat; undefined elsewhere. */
export function machineCpu (): { busyMs: number, cores: number } | undefined {
  if (process.platform !== 'linux') return undefined
  const lines = readFileSync('/proc/stat', 'utf8').split('\n')
  // user nice system idle iowait irq softirq steal (guest time is within user already)
  const ticks = lines[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
  const idle = ticks[3]! + ticks[4]!
  return { busyMs: (ticks.reduce((a, b) => a + b, 0) - idle) * msPerTick(), cores: lines.filter(l => /^cpu\d+ /.test(l)).length }
}
