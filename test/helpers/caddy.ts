import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './ports.js'
import { within } from './until.js'

interface Teardown { teardown: (fn: () => unknown) => void }

/** tap's `skip` for tests that need Debian's caddy. */
export const skipWithoutCaddy = spawnSync('caddy', ['version'], { encoding: 'utf8' }).status === 0
  ? false
  : 'caddy is not installed (apt-get install caddy; .ci/run does)'

/** deploy/proxy/Caddyfile as written, on a free port with the admin endpoint off. */
export async function projectCaddyfile (): Promise<{ config: string, port: number }> {
  const port = await freePort()
  const config = readFileSync('deploy/proxy/Caddyfile', 'utf8').replace(/^:80 \{/m, `{\n\tadmin off\n}\n:${port} {`)
  return { config, port }
}

/** Runs Caddy on a Caddyfile that listens on `port`; resolves once it serves. */
export async function startCaddy (t: Teardown, config: string, port: number): Promise<{ baseUrl: string, output: () => string }> {
  const dir = mkdtempSync(join(tmpdir(), 'screening-caddy-'))
  writeFileSync(join(dir, 'Caddyfile'), config)
  let out = ''
  const proxy = spawn('caddy', ['run', '--adapter', 'caddyfile', '--config', join(dir, 'Caddyfile')], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir } })
  proxy.stdout.on('data', (c: Buffer) => { out += c.toString() })
  proxy.stderr.on('data', (c: Buffer) => { out += c.toString() })
  const exited = new Promise(resolve => proxy.once('exit', resolve))
  t.teardown(async () => {
    if (proxy.exitCode === null) { proxy.kill('SIGKILL'); await exited }
    rmSync(dir, { recursive: true, force: true })
  })
  // Ready once it says so, not after a probe through it: a probe would spend a request on
  // an upstream (and dent its passive health) before the test's own requests.
  await within(() => /serving initial configuration/.test(out) || proxy.exitCode !== null, 10_000, 20)
  if (!/serving initial configuration/.test(out)) throw new Error(`caddy did not start:\n${out}`)
  return { baseUrl: `http://127.0.0.1:${port}`, output: () => out }
}
