import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startServer } from '../helpers/server-process.js'
import { within } from '../helpers/until.js'

// `npm start` as a newcomer runs it: a new embedded database, demo data, the printed keys.
t.test('a first start creates, migrates and seeds the embedded database and prints working keys', async t => {
  const server = await startServer(t)
  t.equal(server.docsUrl, `${server.baseUrl}/docs`)
  t.same(Object.keys(server.keys).sort(), ['free', 'pro', 'restricted'])
  for (const plan of ['pro', 'free'] as const) {
    const res = await fetch(`${server.baseUrl}/api/me`, { headers: { authorization: `Bearer ${server.keys[plan]}` } })
    t.equal(res.status, 200)
    t.equal((await res.json() as { subscription: { plan: string } }).subscription.plan, plan)
  }
  // The restricted demo key (issue 24): the Pro organization's, jobs:read only.
  const restricted = { authorization: `Bearer ${server.keys.restricted}` }
  const me = await fetch(`${server.baseUrl}/api/me`, { headers: restricted })
  t.match(await me.json(), { subscription: { plan: 'pro' }, scopes: ['jobs:read'] }, 'the restricted key: Pro, jobs:read only')
  t.equal((await fetch(`${server.baseUrl}/api/jobs/${server.sampleJobId}`, { headers: restricted })).status, 200, 'it reads the job')
  const analytics = await fetch(`${server.baseUrl}/api/jobs/${server.sampleJobId}/analytics`, { headers: restricted })
  t.equal(analytics.status, 403)
  t.match(await analytics.json(), { code: 'insufficient_scope', required_scope: 'analytics:read' }, 'not its analytics')
  const none = await fetch(`${server.baseUrl}/api/me`)
  t.equal(none.status, 401)
  t.equal((await none.json() as { code: string }).code, 'unauthorized')
  const curl = /curl -H "([^"]+)" (\S+)/.exec(server.output())
  const pasted = await fetch(curl![2]!, { headers: { authorization: curl![1]!.replace(/^Authorization: /, '') } })
  t.equal(pasted.status, 200, 'the printed curl line works')
  t.equal(await server.stop('SIGTERM'), 0, 'SIGTERM closes cleanly')
})

// Ctrl-C in a terminal signals its whole process group, and npm and tsx relay it again: the
// server got two or three SIGINTs within milliseconds and exited at once ("second SIGINT,
// exiting"), skipping the drain and the database's close. One Ctrl-C is one stop.
t.test('Ctrl-C on `npm start` (SIGINT to its process group) closes once, cleanly: the data directory released', async t => {
  const dataDir = mkdtempSync(join(tmpdir(), 'screening-ctrl-c-'))
  const server = await startServer(t, {}, { command: ['npm', 'start'], group: true, dataDir })
  const socket = join(dataDir, '.s.PGSQL.5432')
  t.ok(existsSync(socket), 'the running server owns the directory (its socket)')
  await server.stop('SIGINT')
  await within(() => !existsSync(socket), 15_000, 50)
  t.notMatch(server.output(), /second SIG|killed by timeout/, 'one stop, not an exit on a "second" signal')
  t.notOk(existsSync(socket), 'the socket removed: the database closed and the directory released')
  t.notOk(existsSync(join(dataDir, 'owner.json')), 'and its owner file')
})
