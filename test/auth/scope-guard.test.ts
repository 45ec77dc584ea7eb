import t from 'tap'
import type { FastifyRequest } from 'fastify'
import { grantedScopes, parseScopeList, SCOPES } from '../../src/auth/scopes.js'
import { ApiError } from '../../src/errors.js'
import { requiredScopes, scopeGuardFor } from '../../src/plugins/scope-guard.js'

// The scope guard reads an operation's scope from its OpenAPI security requirement; what it
// cannot enforce faithfully stops the service at start-up instead (issue 24).

const forbidden = { 403: { description: 'x' } }

t.test('the scopes of a requirement; none for an open one', async t => {
  t.same(requiredScopes({ url: '/a', schema: { security: [{ bearerAuth: ['jobs:read'] }] } }), ['jobs:read'])
  t.same(requiredScopes({ url: '/a', schema: { security: [{ bearerAuth: [] }] } }), [])
  t.same(requiredScopes({ url: '/a', schema: {} }), [])
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
