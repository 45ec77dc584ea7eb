import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { PGlite } from '@electric-sql/pglite'
import type { RunningServer } from './server-process.js'
import { until } from './until.js'

// Processes on one embedded data directory, as a newcomer runs them beside `npm start`: the
// admin command, another start, and what the directory holds once they are all gone.

export interface Run { status: number | null, stdout: string, stderr: string }

export async function admin (dataDir: string, ...args: string[]): Promise<Run> {
  const { DATABASE_URL: _, ...env } = process.env
  return await new Promise(resolve => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], { env: { ...env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr })
    })
  })
}

export interface Launched { child: ChildProcess, output: () => string, exited: Promise<number | null>, outcome: Promise<'served' | 'exited'> }

/** `npm start` on the directory, as a process of its own: whether it comes to serve or exits first. */
export function launch (dataDir: string): Launched {
  const { DATABASE_URL: _, ...env } = process.env
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c: Buffer) => { output += c.toString() })
  child.stderr.on('data', (c: Buffer) => { output += c.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  void exited.then(() => { clearTimeout(killer) })
  const outcome = Promise.race([
    exited.then(() => 'exited' as const),
    until('the banner', () => /curl -H/.test(output) || child.exitCode !== null, 60_000).then(() => /curl -H/.test(output) ? 'served' as const : 'exited' as const),
  ])
  return { child, output: () => output, exited, outcome }
}

/** A second `npm start` on the directory: its exit code and output; one that starts serving is stopped. */
export async function secondStart (dataDir: string): Promise<{ code: number | null, output: string, served: boolean }> {
  const started = launch(dataDir)
  const served = await started.outcome === 'served'
  if (served) started.child.kill('SIGTERM')
  return { code: await started.exited, output: started.output(), served }
}

export const me = async (server: RunningServer, key: string): Promise<number> => (await fetch(`${server.baseUrl}/api/me`, { headers: { authorization: `Bearer ${key}` } })).status

/** What the directory holds of the tests' writes (keys named `round …`, organizations `Owner test…`), opened by PGlite itself once nothing runs on it. */
export async function holdings (dataDir: string): Promise<{ keys: string[], orgs: string[] }> {
  const db = new PGlite(dataDir)
  try {
    const keys = (await db.query<{ prefix: string }>("SELECT prefix FROM api_keys WHERE name LIKE 'round %' ORDER BY prefix")).rows.map(r => r.prefix)
    const orgs = (await db.query<{ name: string }>("SELECT name FROM organizations WHERE name LIKE 'Owner test%' ORDER BY name")).rows.map(r => r.name)
    return { keys, orgs }
  } finally {
    await db.close()
  }
}
