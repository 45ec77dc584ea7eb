import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { within } from './until.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface RunningServer {
  child: ChildProcess
  /** Everything the process printed so far. */
  output: () => string
  baseUrl: string
  docsUrl: string
  /** The demo keys of the banner; `restricted`: the Pro organization's key with jobs:read only. */
  keys: { pro: string, free: string, restricted: string }
  /** The job id of the banner's curl line (the Pro organization's branded demo job). */
  sampleJobId: string
  stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

export interface StartOptions {
  /** The command line; `npm start`'s by default. */
  command?: string[]
  /** Where it runs; the project root by default. */
  cwd?: string
  /** The embedded database's directory: a new one by default; a former run's to restart it. */
  dataDir?: string
  /** Its own process group, as a terminal runs it: `stop` signals the whole group, as Ctrl-C does. */
  group?: boolean
}

/**
 * `npm start` as a newcomer runs it: the real server in a child process, on a new embedded
 * database (created, migrated and seeded) and a free port, read from its start-up banner.
 */
export async function startServer (t: Teardown, env: Record<string, string> = {}, options: StartOptions = {}): Promise<RunningServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'screening-server-'))
  const { DATABASE_URL: _, ...inherited } = process.env
  const [program, ...args] = options.command ?? [process.execPath, '--import', 'tsx', 'src/server.ts']
  const child = spawn(program!, args, {
    env: { ...inherited, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.group === true,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  })
  let out = ''
  child.stdout!.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr!.on('data', (c: Buffer) => { out += c.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  const signal = (name: NodeJS.Signals): void => { try { process.kill(options.group === true ? -child.pid! : child.pid!, name) } catch {} }
  t.teardown(async () => {
    if (child.exitCode === null) { signal('SIGKILL'); await exited } else if (options.group === true) signal('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  })
  await within(() => /curl -H/.test(out) || child.exitCode !== null, 90_000, 50)
  if (!/curl -H/.test(out)) throw new Error(`the server did not start (exit ${child.exitCode}, signal ${child.signalCode}):\n${out}`)
  const keys = Object.fromEntries([...out.matchAll(/^ +(pro|free) +.+? +(srk_\S+)$/gm)].map(m => [m[1], m[2]])) as { pro: string, free: string, restricted: string }
  keys.restricted = /^ +pro +.+? +(srk_\S+) +jobs:read only/m.exec(out)?.[1] ?? ''
  return {
    child,
    output: () => out,
    baseUrl: /Base URL: +(\S+)/.exec(out)![1]!,
    docsUrl: /API docs: +(\S+)/.exec(out)![1]!,
    keys,
    sampleJobId: /\/api\/jobs\/([0-9a-f-]{36})/.exec(out)![1]!,
    stop: async (name = 'SIGTERM') => { signal(name); return await exited },
  }
}
