import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ConfigSchema } from '../../src/config.js'
import { sleep } from '../helpers/sleep.js'
import { within } from '../helpers/until.js'

// `npm run dev` as a contributor runs it: JSON logs when its output is not a terminal,
// pino-pretty's when it is (a pseudo-terminal from util-linux's `script`), and a restart
// when a source file changes.

interface Dev { output: () => string, waitFor: (pattern: RegExp, count?: number) => Promise<string> }

function startDev (t: Test, options: { tty: boolean }): Dev {
  const dataDir = mkdtempSync(join(tmpdir(), 'screening-dev-'))
  // Every variable of the service set, empty (the default) where not given: a contributor's
  // .env, which npm run dev reads, then changes nothing (the environment takes precedence).
  const unset = Object.fromEntries(Object.keys(ConfigSchema.properties).map(k => [k, '']))
  const [command, args] = options.tty ? ['script', ['-qfec', 'npm run dev', '/dev/null']] as const : ['npm', ['run', 'dev']] as const
  // Its own process group: npm, tsx's watcher and the server stop together.
  const child = spawn(command, args, { env: { ...process.env, ...unset, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let out = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr.on('data', (c: Buffer) => { out += c.toString() })
  const exited = new Promise(resolve => child.once('exit', resolve))
  t.teardown(async () => {
    try { process.kill(-child.pid!, 'SIGTERM') } catch {}
    await Promise.race([exited, sleep(5000)])
    try { process.kill(-child.pid!, 'SIGKILL') } catch {}
    rmSync(dataDir, { recursive: true, force: true })
  })
  return {
    output: () => out,
    waitFor: async (pattern, count = 1) => {
      const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : pattern.flags + 'g')
      const seen = (): boolean => (out.match(global)?.length ?? 0) >= count
      if (!await within(() => seen() || child.exitCode !== null, 60_000, 50) || !seen()) throw new Error(`waited for ${pattern} ×${count}:\n${out}`)
      return out
    },
  }
}

const baseUrl = (out: string): string => /Base URL: +(\S+)/.exec(out)![1]!

t.test('not a terminal: JSON logs, one object a line; a changed source file restarts the server', async t => {
  const dev = startDev(t, { tty: false })
  await dev.waitFor(/Server listening at/)
  // The banner (and its base URL) follows the listening line: read the output as it is then.
  let out = await dev.waitFor(/curl -H/)
  const res = await fetch(`${baseUrl(out)}/health/live`)
  t.equal(res.status, 200)
  out = await dev.waitFor(/"msg":"request completed"/)
  const logs = out.split(/\r?\n/).filter(line => line.startsWith('{')).map(line => JSON.parse(line) as { level: number, msg: string })
  t.ok(logs.some(l => l.level === 30 && l.msg.startsWith('Server listening at')), 'the start, as JSON')
  t.ok(logs.some(l => l.msg === 'request completed'), 'the request, as JSON')
  t.notMatch(out, /\bINFO\b/, 'no pretty lines')

  // The watcher reacts to a file's modification time; the content is left as it is.
  const now = new Date()
  utimesSync('src/version.ts', now, now)
  await dev.waitFor(/Server listening at/, 2)
  t.match(dev.output(), /change in \.\/src\/version\.ts/)
})

t.test('a terminal: pino-pretty\'s human-readable lines', async t => {
  const dev = startDev(t, { tty: true })
  const out = await dev.waitFor(/INFO.*Server listening at/)
  t.notMatch(out, /^\{"level"/m, 'no JSON lines')
})
