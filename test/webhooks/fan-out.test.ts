import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { within } from '../helpers/until.js'

// One organization's fan-out stops no one (issue 55, finding 1): 15,008 endpoints, 14,000 of
// them in one organization (rows past the API's cap of 16, as an operator's raised
// WEBHOOK_ENDPOINTS_MAX or rows made before the cap would be), and 63 organizations of 16; a
// burst of 163 changes (100 in the big organization, one in each small one). The instance
// runs in a process of its own under the production V8 flags (start:prod's 256 MB heap), on
// the database TEST_DATABASE_URL names (the server), else an embedded one of its own.
// Before the fix, the first run read 100 changes for the whole group of 14,000: 1,400,000
// events at once; the instance ran out of memory, and so again on every restart.

const BIG = 14_000
const SMALL = 63
const received = new Map<string, number>()
let total = 0
const server = createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    const org = request.url!.split('/').pop()!
    received.set(org, (received.get(org) ?? 0) + 1)
    total++
    response.writeHead(204).end()
  })
})
server.keepAliveTimeout = 60_000
await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
t.teardown(() => { server.closeAllConnections(); server.close() })
const receiver = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`

t.test('15,008 endpoints and a burst: every run hands out at most 10,000 events, the heap stays small, every small organization is told at once', async t => {
  const child = spawn(process.execPath, ['--max-semi-space-size=16', '--max-old-space-size=256', '--import', 'tsx', 'test/helpers/fan-out-instance.ts'], {
    env: { ...process.env, FANOUT_RECEIVER: receiver, FANOUT_BIG: String(BIG), FANOUT_SMALL: String(SMALL), FANOUT_BIG_CHANGES: '100' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGKILL'); await exited } })
  const runs = (): Array<Record<string, number>> => out.split('\n').filter(line => line.startsWith('{"run"')).map(line => JSON.parse(line) as Record<string, number>)
  const smallTold = (): number => [...received.entries()].filter(([org, n]) => org !== '0' && n >= 16).length

  const deadline = Date.now() + 240_000
  await within(() => child.exitCode !== null || out.includes('"ready"'), deadline - Date.now(), 50)
  const burst = Date.now()
  await within(() => child.exitCode !== null || smallTold() >= SMALL, deadline - Date.now(), 20)
  const toldInMs = Date.now() - burst
  // Then the big organization's backlog for a while: the bounds must hold all along.
  await within(() => child.exitCode !== null, 15_000, 100)
  const ready = JSON.parse(out.split('\n').find(line => line.startsWith('{"ready"')) ?? '{}') as Record<string, number>
  const fatal = err.split('\n').filter(l => /heap|memory|FATAL|Error/.test(l)).slice(0, 2).join(' | ')
  t.ok(child.exitCode === null && fatal === '', `the instance is still running, never out of memory (${fatal || 'no error'})`)
  t.notMatch(out, /failedRun/, `no run failed (${/"failedRun":"([^"]{0,300})/.exec(out)?.[1] ?? 'none'})`)
  t.equal(ready.endpoints, BIG + 16 * SMALL, `${ready.endpoints} endpoints, ${ready.changes} changes`)
  const seen = runs()
  const most = Math.max(0, ...seen.map(r => r.events!))
  const heap = Math.max(0, ...seen.map(r => r.heapUsedMb!))
  const rss = Math.max(0, ...seen.map(r => r.rssMb!))
  t.ok(seen.length > 0 && most <= 10_000, `every run handed out at most 10,000 events (${seen.length} runs, at most ${most})`)
  t.ok(seen.length >= 5 && heap < 200, `the heap stayed far below the 256 MB limit, run after run (${seen.length} runs; at most ${heap} MB used; RSS at most ${rss} MB)`)
  t.equal(smallTold(), SMALL, `every endpoint of every small organization was told of its change (all of them within ${toldInMs} ms of the burst)`)
  t.ok((received.get('0') ?? 0) > 0, `the big organization is told too, its backlog worked off meanwhile (${received.get('0') ?? 0} deliveries of ${100 * BIG} so far)`)
  t.comment(`figures: fan-out: ${ready.endpoints} endpoints, ${seen.length} runs, at most ${most} events a run, heap at most ${heap} MB, RSS ${rss} MB; the ${SMALL * 16} small organizations' endpoints all told within ${toldInMs} ms; ${total} deliveries received in all; the longest run ${Math.max(0, ...seen.map(r => r.ms!))} ms`)
})
