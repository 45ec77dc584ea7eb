import { execFileSync, spawnSync } from 'node:child_process'
import t from 'tap'
import { NOT_PUBLIC } from '../../src/webhooks/egress.js'

// The address guard (src/webhooks/egress.ts), asked to reach every kind of address that is
// not public, as a literal and as a name (a stub resolver answers it), at creation and when
// connecting; a name that resolves elsewhere when dialled (DNS rebinding). It runs in a
// network namespace of its own with loopback only (test/helpers/egress-probe.ts under `unshare -n`), so
// that no connection can leave the machine whatever the guard does; a listener on 127.0.0.2
// (loopback, not allowed) counts the connections that got through: none may.

const unshare = spawnSync('unshare', ['-n', 'true'])
const skip = unshare.status !== 0 ? `needs unshare -n (a network namespace of the test's own; root): ${String(unshare.stderr).trim() || unshare.error?.message}` : false

t.test('non-public addresses are refused at creation and at connection, before any connection; rebinding too', { skip }, async t => {
  const out = execFileSync('unshare', ['-n', 'sh', '-c', `ip link set lo up && exec "${process.execPath}" --import tsx test/helpers/egress-probe.ts`], { encoding: 'utf8', timeout: 60_000 })
  const records = out.trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
  const notPublic = records.filter(r => r.case === 'not public')
  t.equal(notPublic.length, 16 * 3, 'every address, as https, http and a name')
  for (const r of notPublic) {
    t.equal(r.atCreation, `is refused: ${NOT_PUBLIC}`, `${String(r.url)}: refused at creation, saying nothing of the address`)
    t.equal(r.atConnect, `refused: ${NOT_PUBLIC}`, `${String(r.url)}: refused at connection, by the guard (not by the network), saying nothing of the address`)
  }
  const rebinding = records.find(r => r.case === 'rebinding')!
  t.equal(rebinding.atCreation, null, 'a name public when checked: accepted')
  t.equal(rebinding.atConnect, `refused: ${NOT_PUBLIC}`, 'and refused when it resolves to a private address at connection (the attempt\'s record names no address)')
  const https = records.find(r => r.case === 'public, over https')!
  t.equal(https.atCreation, null, 'a public address over https: accepted')
  t.match(https.atConnect, /ENETUNREACH|EHOSTUNREACH|ECONNREFUSED/, `and dialled: the guard let it through, the namespace stopped it (${String(https.atConnect)})`)
  const http = records.find(r => r.case === 'public, over http')!
  t.equal(http.atCreation, `is refused: ${NOT_PUBLIC}`, 'over http: refused at creation')
  t.match(http.atConnect, /^refused: /, 'and at connection')
  t.match(records.find(r => r.case === 'allowed network'), { atCreation: null, status: 204 }, 'an address of WEBHOOK_ALLOWED_NETWORKS: allowed, over http')
  t.match(records.find(r => r.case === 'trap'), { connections: 0 }, 'the listener on 127.0.0.2 (not allowed) saw no connection')
  t.comment(`figures: egress guard: ${notPublic.length} refusals at creation and at connection, rebinding refused, 0 connections through`)
})
