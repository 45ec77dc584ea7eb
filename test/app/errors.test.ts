import { PassThrough } from 'node:stream'
import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createTenant } from '../helpers/fixtures.js'

const lines: string[] = []
const stream = new PassThrough()
stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)))

const { app, prisma } = await buildTestApp(t, {
  logStream: stream,
  // Routes that fail the way a bug would, on the real app.
  routes: app => {
    app.get('/boom', async (request) => {
      request.log.info({ headers: request.headers }, 'request headers')
      throw new Error('secret: connection string postgres://admin:hunter2@db')
    })
  },
})
const tenant = await createTenant(prisma)

t.test('an unknown route is a 404 in the error shape', async t => {
  const res = await app.inject({ url: '/api/nothing-here' })
  t.equal(res.statusCode, 404)
  t.same(res.json(), { error: 'Route not found', code: 'not_found', request_id: res.headers['x-request-id'] })
})

t.test('a 500 carries no internals; the log has them, and never the Authorization header', async t => {
  const res = await app.inject({ url: '/boom', headers: { authorization: `Bearer ${tenant.key}` } })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: 'Internal server error', code: 'internal', request_id: res.headers['x-request-id'] })
  t.notMatch(res.body, /hunter2|secret/)
  const log = lines.join('\n')
  t.match(log, /hunter2/, 'the log has the internal error')
  t.match(log, /"authorization":"\[redacted\]"/, 'the header is redacted where logged')
  t.notOk(log.includes(tenant.key), 'the key never reaches the log')
  const line = lines.map(l => JSON.parse(l) as { reqId?: string, msg?: string }).find(l => l.msg === 'unhandled error')
  t.equal(line?.reqId, res.headers['x-request-id'], 'the log line carries the request id')
})

t.test('a bug on a documented operation is a documented 500 (checked against the document)', async t => {
  const { app: broken, db } = await buildTestApp(t)
  const owner = await createTenant(db.prisma)
  const { createJob } = await import('../helpers/fixtures.js')
  const job = await createJob(db.prisma, owner)
  // A schema the code does not expect: what a bad deployment would look like.
  await db.prisma.$executeRawUnsafe('ALTER TABLE questions RENAME TO questions_gone')
  const res = await broken.inject({ url: `/api/jobs/${job.id}`, headers: owner.auth })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: 'Internal server error', code: 'internal', request_id: res.headers['x-request-id'] })
})
