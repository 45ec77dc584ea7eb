import t from 'tap'
import { SignedJson } from '../../../src/signed-json.js'
import { parseSnapshot } from '../../../src/changes/snapshot.js'
import { SyncTokens, type SyncPoint } from '../../../src/jobs/sync/tokens.js'

// Sync tokens and the cursors of a sync's pages, as signed payloads: what each release wrote,
// and what this one reads of them.

const signer = new SignedJson('a secret for the tests of sync tokens, long enough')
const tokens = new SyncTokens(signer)
const ORG = '6a1f3c2e-1b2d-4c3e-8f4a-5b6c7d8e9f00'
const JOB = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0'
const point: SyncPoint = { seen: parseSnapshot('100:110:104')!, generation: 7, history: '0123456789abcdef', analytics: true }

t.test('a sync page\'s cursor carries its place in the change log: transaction and job', async t => {
  const seen = parseSnapshot('105:120:')!
  const cursor = tokens.cursor(ORG, point, { xid: '108', jobId: JOB }, seen, false)
  t.same(tokens.page(cursor, ORG, point), { after: { xid: '108', jobId: JOB }, seen, analytics: false })
  t.equal(tokens.page(cursor, '00000000-0000-4000-8000-000000000000', point), undefined, 'another organization\'s: refused')
  t.equal(tokens.page(cursor, ORG, { ...point, seen: parseSnapshot('100:111:104')! }), undefined, 'another sync\'s: refused')
})

t.test('a cursor of the release before (a job id: pages by id) starts the sync over, with what its pages saw', async t => {
  const before = signer.seal({ k: 'sync-page', o: ORG, b: '100:110:104', a: JOB, x: '105:120:' })
  t.same(tokens.page(before, ORG, point), { after: undefined, seen: parseSnapshot('105:120:'), analytics: true })
})

t.test('a cursor whose place is neither is refused', async t => {
  for (const a of ['108', `x:${JOB}`, `108:${JOB}:1`, `${'9'.repeat(21)}:${JOB}`, '']) {
    t.equal(tokens.page(signer.seal({ k: 'sync-page', o: ORG, b: '100:110:104', a, x: '105:120:' }), ORG, point), undefined, JSON.stringify(a))
  }
})

t.test('a token carries its database history; a token of the release before has none, and is read as such (a 410, not a 400)', async t => {
  t.same(tokens.point(tokens.token(ORG, point), ORG), point)
  const before = signer.seal({ k: 'sync', o: ORG, x: '100:110:104', g: 7 })
  t.same(tokens.point(before, ORG), { ...point, history: '' })
  t.equal(tokens.point(signer.seal({ k: 'sync', o: ORG, x: '100:110:104', g: 7, h: 12 }), ORG), undefined, 'a history that is not text: not a token of ours')
})

t.test('a token says whether its syncs skipped the changes of analytics alone; those of releases before did not', async t => {
  const skipped = { ...point, analytics: false }
  t.same(tokens.point(tokens.token(ORG, skipped), ORG), skipped)
  t.equal(tokens.point(signer.seal({ k: 'sync', o: ORG, x: '100:110:104', g: 7, h: 'x', n: 'no' }), ORG), undefined, 'not a boolean: not a token of ours')
})
