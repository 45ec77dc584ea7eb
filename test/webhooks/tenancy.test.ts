import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { startReceiver } from '../helpers/webhook-receiver.js'
import { makeEndpoint } from '../helpers/webhooks.js'
import { sleep } from '../helpers/sleep.js'
import { createApiKey, createUser } from '../../src/admin/commands.js'
import { within } from '../helpers/until.js'

// One organization among many (issue 55): the number of endpoints it may have is bounded, and
// an endpoint is told of an organization's jobs only while the key that made it is of that
// organization; and a chunk whose read fails stops no one else. Receivers on 127.0.0.1, which
// WEBHOOK_ALLOWED_NETWORKS allows here.

const { app, prisma } = await buildTestApp(t, { env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', WEBHOOK_DISPATCH_INTERVAL_MS: '100' } })
const url = 'http://127.0.0.1:9/hooks'
const create = async (tenant: { auth: { authorization: string } }) => await app.inject({ method: 'POST', url: '/api/webhook_endpoints', headers: tenant.auth, payload: { url } })

t.test('16 endpoints an organization, by default: the 17th is a 409 endpoint_limit_reached; disabled ones count, deleted ones do not', async t => {
  const acme = await createTenant(prisma)
  const made: string[] = []
  for (let i = 0; i < 16; i++) {
    const res = await create(acme)
    t.equal(res.statusCode, 201, `endpoint ${i + 1}`)
    made.push(res.json().id)
  }
  const refused = await create(acme)
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { code: 'endpoint_limit_reached', error: /16 webhook endpoints/ })
  t.equal((await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${made[0]}`, headers: acme.auth, payload: { status: 'disabled' } })).statusCode, 200)
  t.equal((await create(acme)).statusCode, 409, 'a disabled endpoint still counts')
  t.equal((await app.inject({ method: 'DELETE', url: `/api/webhook_endpoints/${made[0]}`, headers: acme.auth })).statusCode, 204)
  t.equal((await create(acme)).statusCode, 201, 'a deleted one does not')
  t.equal((await create(await createTenant(prisma))).statusCode, 201, 'another organization has its own 16')
  t.equal(await prisma.webhookEndpoint.count({ where: { organizationId: acme.organizationId } }), 16)
})

t.test('20 creations at once: 16 made, 4 refused, never 17', async t => {
  const globex = await createTenant(prisma)
  const answers = await Promise.all(Array.from({ length: 20 }, async () => (await create(globex)).statusCode))
  t.same(answers.filter(s => s === 201).length, 16)
  t.same(answers.filter(s => s === 409).length, 4)
  t.equal(await prisma.webhookEndpoint.count({ where: { organizationId: globex.organizationId } }), 16)
})

t.test('a person who left is told nothing: the endpoint their key made stops at once, disabled key_moved, shown to the organization it was made in', async t => {
  const acme = await createTenant(prisma)
  const other = await createTenant(prisma)
  const stays = await createUser(prisma, { organizationId: acme.organizationId, email: `stays-${Date.now()}@example.test`, name: 'Stays' })
  const staysKey = await createApiKey(prisma, { userId: stays.id })
  const stayer = { auth: { authorization: `Bearer ${staysKey.key}` } }
  const receiver = await startReceiver()
  t.teardown(receiver.close)
  const endpoint = await makeEndpoint(app, acme, receiver.url)
  const job = await createJob(prisma, { ...acme, userId: stays.id })
  t.ok(await receiver.until(r => r.some(x => x.jobId === job.id)), 'told while its maker is of the organization')

  // The maker's user moves to another organization (the recruiters' app does it in SQL).
  await prisma.$executeRaw`UPDATE users SET organization_id = ${other.organizationId}::uuid WHERE id = ${acme.userId}::uuid`
  const before = receiver.received.length
  await prisma.$executeRaw`UPDATE jobs SET title = 'after the move' WHERE id = ${job.id}::uuid`
  const disabled = async () => (await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).disabledReason === 'key_moved'
  await within(disabled, 5000, 50)
  t.ok(await disabled(), 'disabled, reason key_moved')
  await sleep(500)
  t.equal(receiver.received.length, before, 'nothing more was sent to it')
  const listed = (await app.inject({ url: '/api/webhook_endpoints', headers: stayer.auth })).json().data as Array<{ id: string, status: string, disabled_reason: string }>
  t.match(listed.find(e => e.id === endpoint.id), { status: 'disabled', disabled_reason: 'key_moved' }, 'the organization it was made in sees it, and why')
  t.equal((await app.inject({ url: `/api/webhook_endpoints/${endpoint.id}`, headers: acme.auth })).statusCode, 404, 'the moved key sees nothing of it')

  const enabled = await app.inject({ method: 'PATCH', url: `/api/webhook_endpoints/${endpoint.id}`, headers: stayer.auth, payload: { status: 'enabled' } })
  t.match(enabled.json(), { status: 'enabled', disabled_reason: null }, 'a key of the organization enables it again, and becomes its maker')
  await prisma.$executeRaw`UPDATE jobs SET title = 'told again' WHERE id = ${job.id}::uuid`
  t.ok(await receiver.until(r => r.length > before), 'told again')
})

t.test('a chunk whose read fails is left out and recorded; every other organization goes on being told; after 10 failures it starts over', async t => {
  const acme = await createTenant(prisma)
  const globex = await createTenant(prisma)
  const [poisoned, healthy] = [await startReceiver(), await startReceiver()]
  t.teardown(poisoned.close)
  t.teardown(healthy.close)
  const bad = await makeEndpoint(app, acme, poisoned.url)
  poisoned.secrets.push(bad.secret)
  const good = await makeEndpoint(app, globex, healthy.url)
  healthy.secrets.push(good.secret)
  // A position whose page cannot be read (its cursor names no job): every read of it fails.
  await prisma.$executeRaw`UPDATE webhook_endpoints SET position = position || jsonb_build_object('r', jsonb_build_object('xid', '1', 'job', 'not a job id', 'x', position->>'x')) WHERE id = ${bad.id}::uuid`
  const job = await createJob(prisma, globex)
  t.ok(await healthy.until(r => r.some(x => x.jobId === job.id), 10_000), 'the other organization is told')
  const failing = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: bad.id } })
  t.ok(failing.dispatchFailures >= 1, `its failed reads recorded (${failing.dispatchFailures})`)
  t.match(failing.dispatchError, /uuid|invalid/i, `with why: ${failing.dispatchError}`)
  t.ok(failing.dispatchPausedUntil !== null && failing.dispatchPausedUntil > new Date(), 'left out for a while')
  const later = await createJob(prisma, globex)
  t.ok(await healthy.until(r => r.some(x => x.jobId === later.id), 10_000), 'and told again, while the failing one waits')
  // Ten failed runs in a row: its position starts over, as an expired one does.
  await prisma.$executeRaw`UPDATE webhook_endpoints SET dispatch_failures = 10, dispatch_paused_until = NULL WHERE id = ${bad.id}::uuid`
  t.ok(await poisoned.until(r => r.some(x => x.type === 'sync.reset'), 10_000), 'a sync.reset: walk the jobs again')
  await sleep(300)
  t.match(await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: bad.id } }), { dispatchFailures: 0, dispatchError: null, dispatchPausedUntil: null }, 'its record cleared once it reads again')
})
