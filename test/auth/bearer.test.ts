import t from 'tap'
import { bearerCredential, bearerMatcher } from '../../src/auth/bearer.js'

t.test('the credential of a Bearer header, as the patterns it replaces read it', async t => {
  t.equal(bearerCredential('Bearer abc'), 'abc')
  t.equal(bearerCredential('bEaReR    abc   '), 'abc', 'scheme in any case; spaces around the credential dropped')
  t.equal(bearerCredential('Bearer a b'), 'a b', 'inner spaces kept (a token may have them; an API key cannot)')
  for (const header of [undefined, '', 'Bearer', 'Bearer ', 'Bearer    ', 'Bearerabc', 'Basic abc', 'Bearer\tabc', ' Bearer abc']) {
    t.equal(bearerCredential(header), undefined, JSON.stringify(header))
  }
})

t.test('bearerMatcher compares the whole credential', async t => {
  const matches = bearerMatcher('secret token')
  t.ok(matches('Bearer secret token'))
  t.ok(matches('bearer  secret token '))
  t.notOk(matches('Bearer secret'))
  t.notOk(matches('Bearer secret tokenx'))
  t.notOk(matches(undefined))
})
