import t from 'tap'
import { SignedJson } from '../../src/signed-json.js'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const signer = new SignedJson('a secret for the tests of signed tokens, long enough')

t.test('a token edited in any one character of its signature is refused', async t => {
  const token = signer.seal({ k: 'test', n: 1 })
  t.same(signer.open(token), { k: 'test', n: 1 }, 'the token as sealed opens')
  const dot = token.indexOf('.')
  let accepted = 0
  let tried = 0
  for (let i = dot + 1; i < token.length; i++) {
    for (const c of ALPHABET) {
      if (c === token[i]) continue
      tried++
      if (signer.open(token.slice(0, i) + c + token.slice(i + 1)) !== undefined) accepted++
    }
  }
  // The last character of 16 bytes in base64url holds 2 bits: 15 other letters decode the same.
  t.equal(accepted, 0, `none of ${tried} edits opens, the ones that decode to the same bytes included`)
  t.equal(signer.open(`${token}=`), undefined, 'padding added: refused')
  t.equal(signer.open(token.replace('.', '.!')), undefined, 'a letter outside the alphabet: refused')
})
