import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'

// `npm start` as a newcomer runs it: a new embedded database, demo data, the printed keys.
t.test('a first start creates, migrates and seeds the embedded database and prints working keys', async t => {
  const dataDir = mkdtempSync(join(tmpdir(), 'screening-start-'))
  const { DATABASE_URL: _, ...env } = process.env
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL'); rmSync(dataDir, { recursive: true, force: true }) })
  let out = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr.on('data', (c: Buffer) => { out += c.toString() })
  const started = Date.now()
  while (!/curl -H/.test(out) && Date.now() - started < 60_000 && child.exitCode === null) await new Promise(resolve => setTimeout(resolve, 100))
  t.match(out, /curl -H/, 'the banner is printed')
  const base = /Base URL: +(\S+)/.exec(out)?.[1]
  t.match(/API docs: +(\S+)/.exec(out)?.[1], `${base}/docs`)
  const keys = [...out.matchAll(/^ +(pro|free) +.+? +(srk_\S+)$/gm)].map(m => ({ plan: m[1], key: m[2] }))
  t.same(keys.map(k => k.plan), ['pro', 'free'])
  for (const { plan, key } of keys) {
    const res = await fetch(`${base}/api/me`, { headers: { authorization: `Bearer ${key}` } })
    t.equal(res.status, 200)
    t.equal((await res.json() as { subscription: { plan: string } }).subscription.plan, plan)
  }
  const none = await fetch(`${base}/api/me`)
  t.equal(none.status, 401)
  t.equal((await none.json() as { code: string }).code, 'unauthorized')
  const curl = /curl -H "([^"]+)" (\S+)/.exec(out)
  const pasted = await fetch(curl![2]!, { headers: { authorization: curl![1]!.replace(/^Authorization: /, '') } })
  t.equal(pasted.status, 200, 'the printed curl line works')
  child.kill('SIGTERM')
  await new Promise(resolve => child.once('exit', resolve))
  t.equal(child.exitCode, 0, 'SIGTERM closes cleanly')
})
