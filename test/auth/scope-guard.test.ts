import t from 'tap'
import Fastify, { type FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { grantedScopes, parseScopeList, SCOPES } from '../../src/auth/scopes.js'
import { ApiError } from '../../src/errors.js'
import scopeGuardPlugin, { isApiPath, requiredScopes, scopeGuardFor } from '../../src/plugins/scope-guard.js'
import { buildTestApp } from '../helpers/app.js'

// The scope guard reads an operation's scope from its OpenAPI security requirement; what it
// cannot enforce faithfully stops the service at start-up instead (issue 24). An /api route
// that declares no security, or that is registered where the auth hook does not run, stops
// it too (issue 35): it would be served without a scope, or without a key.

const forbidden = { 403: { description: 'x' } }

t.test('the scopes of a requirement; none for a valid key alone; no requirement is refused', async t => {
  t.same(requiredScopes({ url: '/a', schema: { security: [{ bearerAuth: ['jobs:read'] }] } }), ['jobs:read'])
  t.same(requiredScopes({ url: '/a', schema: { security: [{ bearerAuth: [] }] } }), [])
  t.throws(() => requiredScopes({ url: '/api/a', method: 'GET', schema: {} }), /GET \/api\/a: an \/api route must declare its security requirement/)
  t.throws(() => requiredScopes({ url: '/api/a', method: 'GET' }), /declares none/, 'no schema at all')
  t.throws(() => requiredScopes({ url: '/api/a', schema: { security: [] } }), /only one security requirement/, 'an explicitly open operation')
})

t.test('which paths are /api', async t => {
  for (const path of ['/api', '/api/', '/api/jobs', '/API/jobs', '//api/jobs']) t.ok(isApiPath(path), path)
  for (const path of ['/apis', '/health/ready', '/metrics', '/docs/', '/openapi.json', '/']) t.notOk(isApiPath(path), path)
})

t.test('what cannot be enforced as written is refused', async t => {
  t.throws(() => requiredScopes({ url: '/a', schema: { security: [{ bearerAuth: ['jobs:write'] }] } }), /unknown scope\(s\) jobs:write/)
  t.throws(() => requiredScopes({ url: '/a', schema: { security: [{ bearerAuth: ['jobs:read'] }, { bearerAuth: ['analytics:read'] }] } }), /only one security requirement/)
  t.throws(() => requiredScopes({ url: '/a', schema: { security: [{ oauth: ['jobs:read'] }] } }), /of bearerAuth/)
  t.throws(() => scopeGuardFor({ url: '/a', schema: { security: [{ bearerAuth: ['jobs:read'] }], response: { 200: {} } } }), /documents no 403/)
})

t.test('the guard: 403 insufficient_scope naming the first missing scope', async t => {
  const guard = scopeGuardFor({ url: '/a', schema: { security: [{ bearerAuth: ['analytics:read'] }], response: forbidden } })!
  const as = (scopes: string[]) => ({ caller: { scopes } }) as unknown as FastifyRequest
  await t.resolves(guard(as(['jobs:read', 'analytics:read'])))
  const error = await guard(as(['jobs:read'])).catch((e: unknown) => e) as ApiError
  t.ok(error instanceof ApiError)
  t.match(error, { statusCode: 403, code: 'insufficient_scope', extra: { required_scope: 'analytics:read' } })
  t.equal(scopeGuardFor({ url: '/me', schema: { security: [{ bearerAuth: [] }] } }), undefined, 'no scope, no guard')
})

t.test('stored scopes and the operator\'s lists', async t => {
  t.same(grantedScopes(['*']), [...SCOPES], '* is every scope')
  t.same(grantedScopes(['analytics:read']), ['analytics:read'])
  t.same(parseScopeList('all'), { scopes: ['*'] })
  t.same(parseScopeList(' analytics:read ,jobs:read,jobs:read'), { scopes: ['jobs:read', 'analytics:read'] })
  t.match(parseScopeList('jobs:read,jobs:write'), { error: /unknown scope "jobs:write": known scopes are jobs:read, analytics:read/ })
  t.match(parseScopeList(''), { error: /at least one scope/ })
  t.match(parseScopeList('all,jobs:read'), { error: /stands alone/ })
})

// What the issue found: such a route started, and answered.
t.test('an /api route without security in the authenticated context: it does not start', async t => {
  const app = Fastify({ logger: false })
  t.teardown(async () => { await app.close() })
  // The guard's one dependency, by name: no request is made, the refusal is at start-up.
  await app.register(fp(async () => {}, { name: 'auth' }))
  await t.rejects(async () => {
    await app.register(async api => {
      await api.register(scopeGuardPlugin)
      api.get('/reports', async () => ({ all: 'jobs' }))
    }, { prefix: '/api' })
  }, /GET \/api\/reports: an \/api route must declare its security requirement/)
})

t.test('the service: every /api route declares security and sits behind the key check', async t => {
  const { app } = await buildTestApp(t)
  t.equal((await app.inject({ url: '/api/me' })).statusCode, 401, 'the app starts; /api answers nothing without a key')
})

t.test('an /api route outside the authenticated context, with or without security: the app does not start', async t => {
  await t.rejects(buildTestApp(t, { routes: app => { app.get('/api/open', async () => ({ open: true })) } }),
    /GET \/api\/open; HEAD \/api\/open: \/api route\(s\) registered outside the authenticated \/api context/)
  await t.rejects(buildTestApp(t, {
    routes: app => {
      void app.register(async api => {
        api.get('/reports', { schema: { security: [{ bearerAuth: ['jobs:read'] }], response: { 403: { type: 'object' } } } }, async () => ({ all: 'jobs' }))
      }, { prefix: '/api' })
    },
  }), /GET \/api\/reports; HEAD \/api\/reports: \/api route\(s\) registered outside/, 'declaring security is not enough: no key would be checked')
  const { app } = await buildTestApp(t, { routes: app => { app.get('/status/extra', async () => ({ ok: true })) } })
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200, 'routes outside /api need none: the app starts')
})
