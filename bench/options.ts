// The command line of `npm run bench`: what to run, how long, on which server.

export interface BenchOptions {
  quick: boolean
  /** Multiplies the screens of the dataset (1 → about 1M, 10 → about 10M). */
  scale: number
  rounds: number
  /** Seconds per measurement; the warm-up before each one is discarded. */
  duration: number
  warmup: number
  connections: number
  /** Only the scenarios whose name contains one of these (all when empty): for iterating, not for a figure to quote. */
  only: string[]
  /** Jobs changed since the sync scenario's token (50,000; 5,000 with --quick). */
  syncChanged: number
  /** The PostgreSQL server: a throwaway database is made beside the one this names. */
  serverUrl: string
}

export const USAGE = `usage: BENCH_DATABASE_URL=postgresql://user@host:5432/db npm run bench -- [--quick] [--scale N] [--rounds N] [--duration seconds] [--connections N] [--sync-changed N] [--only 'part of a scenario name']…
  (TEST_DATABASE_URL is used when BENCH_DATABASE_URL is unset; a throwaway database is made on that server and dropped at the end)`

export class UsageError extends Error {}

function positive (name: string, value: string | undefined, integer: boolean): number {
  const n = Number(value)
  if (value === undefined || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`--${name} needs a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(value ?? '')}`)
  }
  return n
}

export function parseOptions (argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const serverUrl = [env.BENCH_DATABASE_URL, env.TEST_DATABASE_URL].find(u => u !== undefined && u !== '')
  if (serverUrl === undefined) throw new UsageError('set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server database')
  const quick = argv.includes('--quick')
  const options: BenchOptions = quick
    ? { quick, scale: 1, rounds: 1, duration: 2, warmup: 1, connections: 16, only: [], syncChanged: 5_000, serverUrl }
    : { quick, scale: 1, rounds: 3, duration: 10, warmup: 2, connections: 16, only: [], syncChanged: 50_000, serverUrl }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--quick') continue
    const [flag, inline] = arg.split('=', 2) as [string, string | undefined]
    const value = inline ?? argv[++i]
    switch (flag) {
      case '--scale': options.scale = positive('scale', value, false); break
      case '--rounds': options.rounds = positive('rounds', value, true); break
      case '--duration': options.duration = positive('duration', value, true); break
      case '--connections': options.connections = positive('connections', value, true); break
      case '--sync-changed': options.syncChanged = positive('sync-changed', value, true); break
      case '--only':
        if (value === undefined || value === '') throw new UsageError('--only needs part of a scenario name')
        options.only.push(value)
        break
      default: throw new UsageError(`unknown argument ${JSON.stringify(arg)}`)
    }
  }
  return options
}
