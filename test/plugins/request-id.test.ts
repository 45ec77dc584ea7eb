import t from 'tap'
import { buildTestApp } from '../helpers/app.js'

const { app } = await buildTestApp(t)
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('a sane request id is echoed, in the header and the error body', async t => {
  const res = await app.inject({ url: '/api/me', headers: { 'x-request-id': 'dashboard-poll:42.a_b' } })
  t.equal(res.statusCode, 401)
  t.equal(res.headers['x-request-id'], 'dashboard-poll:42.a_b')
  t.equal(res.json().request_id, 'dashboard-poll:42.a_b')
})

t.test('an id is generated when none is sent, on every kind of response', async t => {
  for (const url of ['/health/live', '/api/me', '/no/such/route', '/openapi.json']) {
    const res = await app.inject({ url })
    t.match(res.headers['x-request-id'], UUID, url)
  }
  const a = await app.inject({ url: '/health/live' })
  const b = await app.inject({ url: '/health/live' })
  t.not(a.headers['x-request-id'], b.headers['x-request-id'], 'each request its own id')
})

t.test('an unsafe id is replaced, not echoed', async t => {
  for (const bad of ['x'.repeat(129), 'has space', 'a/b', '<script>', '']) {
    const res = await app.inject({ url: '/health/live', headers: { 'x-request-id': bad } })
    t.match(res.headers['x-request-id'], UUID, JSON.stringify(bad.slice(0, 20)))
  }
})
