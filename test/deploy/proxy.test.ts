import t from 'tap'
import { projectCaddyfile, skipWithoutCaddy as skip, startCaddy } from '../helpers/caddy.js'
import { startServer } from '../helpers/server-process.js'

// deploy/proxy/Caddyfile in front of the real server, with Caddy: its rules as written, its
// upstream (Compose's DNS name `api`, not resolvable here) swapped for the server's address.
// Readiness through the proxy: the status only, even with METRICS_TOKEN, which it drops.

const TOKEN = 'metrics-token-for-tests-0123456789'

t.test('readiness through the proxy: no detail, whatever the credential; /metrics not forwarded', { skip }, async t => {
  const server = await startServer(t, { METRICS_TOKEN: TOKEN })
  const upstream = new URL(server.baseUrl)
  const { config: original, port } = await projectCaddyfile()
  const config = original.replace(/\treverse_proxy \{[\s\S]*?\n\t\}\n/, `\treverse_proxy ${upstream.host}\n`)
  t.not(config, original, 'the upstream swapped')
  t.match(config, /request_header @health -Authorization/, 'the rules kept')
  const { baseUrl: base } = await startCaddy(t, config, port)
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
