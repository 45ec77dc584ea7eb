import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { freePort } from '../helpers/ports.js'
import { startServer } from '../helpers/server-process.js'

// deploy/proxy/Caddyfile in front of the real server, with Caddy: its rules as written, its
// upstream (Compose's DNS name `api`, not resolvable here) swapped for the server's address.
// Readiness through the proxy: the status only, even with METRICS_TOKEN, which it drops.

const TOKEN = 'metrics-token-for-tests-0123456789'
const caddy = spawnSync('caddy', ['version'], { encoding: 'utf8' })
const skip = caddy.status === 0 ? false : 'caddy is not installed (apt-get install caddy; .ci/run does)'

t.test('readiness through the proxy: no detail, whatever the credential; /metrics not forwarded', { skip }, async t => {
  const server = await startServer(t, { METRICS_TOKEN: TOKEN })
  const upstream = new URL(server.baseUrl)
  const port = await freePort()
  const original = readFileSync('deploy/proxy/Caddyfile', 'utf8')
  const config = original
    .replace(/^:80 \{/m, `{\n\tadmin off\n}\n:${port} {`)
    .replace(/\treverse_proxy \{[\s\S]*?\n\t\}\n/, `\treverse_proxy ${upstream.host}\n`)
  t.not(config, original, 'the listener and the upstream swapped')
  t.match(config, /request_header @health -Authorization/, 'the rules kept')
  const dir = mkdtempSync(join(tmpdir(), 'screening-caddy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'Caddyfile'), config)
  const proxy = spawn('caddy', ['run', '--adapter', 'caddyfile', '--config', join(dir, 'Caddyfile')], { stdio: 'ignore', env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir } })
  t.teardown(() => { proxy.kill('SIGKILL') })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 100; i++) {
    if (await fetch(`${base}/health/live`).then(r => r.ok, () => false)) break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const operator = { authorization: `Bearer ${TOKEN}` }
  const direct = await (await fetch(`${server.baseUrl}/health/ready`, { headers: operator })).json() as Record<string, unknown>
  t.ok(direct.databases, 'on the internal network, the token gets the detail')
  for (const headers of [{}, operator]) {
    const res = await fetch(`${base}/health/ready`, { headers })
    t.equal(res.status, 200)
    t.same(await res.json(), { status: 'ok' }, `through the proxy, the status only (${Object.keys(headers).length === 0 ? 'no credential' : 'with the token'})`)
  }
  t.equal((await fetch(`${base}/metrics`, { headers: operator })).status, 404, '/metrics is not forwarded')
  t.equal((await fetch(`${base}/api/jobs/${server.sampleJobId}`, { headers: { authorization: `Bearer ${server.keys.pro}` } })).status, 200, 'the API is, credential and all')
})
