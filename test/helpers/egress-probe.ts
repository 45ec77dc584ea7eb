// Run by test/webhooks/egress.test.ts inside a network namespace of its own (unshare -n,
// loopback only): the egress guard asked to reach every kind of address, named and literal.
// Whatever the guard does, nothing can leave the machine from there. Prints one JSON line per
// case. It dials a public address, so it refuses to run anywhere else.
import { createServer } from 'node:http'
import { networkInterfaces } from 'node:os'
import type { AddressInfo } from 'node:net'
import { EgressGuard, type Lookup } from '../../src/webhooks/egress.js'

if (Object.keys(networkInterfaces()).some(name => name !== 'lo')) {
  console.error('egress-probe: not in a network namespace with loopback only (run it through test/webhooks/egress.test.ts): refusing')
  process.exit(2)
}

const NOT_PUBLIC = ['10.0.0.1', '172.16.0.1', '192.168.0.1', '169.254.169.254', '100.64.0.1', '127.0.0.2', '0.0.0.0', '224.0.0.1', '240.0.0.1', '255.255.255.255', 'fd00:ec2::254', '::ffff:10.0.0.1', '::ffff:127.0.0.1', '::1', 'fe80::1', '::']
const answers = new Map<string, string[]>(NOT_PUBLIC.map((address, i) => [`n${i}.example`, [address]]))
answers.set('public.example', ['93.184.216.34'])
let rebound = false
const lookup = ((hostname: string, options: { all?: boolean }, callback: (error: NodeJS.ErrnoException | null, address?: unknown, family?: number) => void) => {
  // rebind.example: public when the endpoint is checked, private when it is dialled.
  const addresses = hostname === 'rebind.example' ? [rebound ? '10.9.9.9' : '93.184.216.34'] : answers.get(hostname)
  if (hostname === 'rebind.example') rebound = true
  if (addresses === undefined) { process.nextTick(() => { callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })) }); return }
  const family = (a: string): number => a.includes(':') ? 6 : 4
  process.nextTick(() => { options.all === true ? callback(null, addresses.map(address => ({ address, family: family(address) }))) : callback(null, addresses[0], family(addresses[0]!)) })
}) as unknown as Lookup

const guard = new EgressGuard(['127.0.0.1/32'], lookup)
const print = (record: Record<string, unknown>): void => { console.log(JSON.stringify(record)) }
let connections = 0
const server = createServer((_request, response) => { response.writeHead(204).end() })
server.on('connection', () => { connections++ })
await new Promise<void>(resolve => { server.listen(0, '127.0.0.2', resolve) })
const trapPort = (server.address() as AddressInfo).port
const allowed = createServer((_request, response) => { response.writeHead(204).end() })
await new Promise<void>(resolve => { allowed.listen(0, '127.0.0.1', resolve) })
const allowedPort = (allowed.address() as AddressInfo).port

for (const [i, address] of NOT_PUBLIC.entries()) {
  const literal = address.includes(':') ? `[${address}]` : address
  for (const url of [`https://${literal}:${trapPort}/hook`, `http://${literal}:${trapPort}/hook`, `https://n${i}.example:${trapPort}/hook`]) {
    print({ case: 'not public', address, url, atCreation: (await guard.refusal(url))?.message ?? null, atConnect: (await guard.post(url, {}, '{}', 2000)).error ?? null })
  }
}
print({ case: 'rebinding', atCreation: (await guard.refusal('https://rebind.example/hook'))?.message ?? null, atConnect: (await guard.post('https://rebind.example/hook', {}, '{}', 2000)).error ?? null })
print({ case: 'public, over https', atCreation: (await guard.refusal('https://public.example/hook'))?.message ?? null, atConnect: (await guard.post('https://public.example/hook', {}, '{}', 2000)).error ?? null })
print({ case: 'public, over http', atCreation: (await guard.refusal('http://public.example/hook'))?.message ?? null, atConnect: (await guard.post('http://public.example/hook', {}, '{}', 2000)).error ?? null })
const ok = await guard.post(`http://127.0.0.1:${allowedPort}/hook`, {}, '{}', 2000)
print({ case: 'allowed network', atCreation: (await guard.refusal(`http://127.0.0.1:${allowedPort}/hook`))?.message ?? null, status: ok.status ?? null, error: ok.error ?? null })
print({ case: 'trap', connections })
guard.close()
server.close()
allowed.close()
