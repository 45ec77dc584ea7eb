import fc from 'fast-check'
import t from 'tap'
import { bounded, intersect, MAX_IN_PROGRESS, parseSnapshot, snapshotText, type Snapshot } from '../../src/changes/snapshot.js'
import { checkProperty } from '../helpers/property.js'

// The arithmetic of a sync token's point, against PostgreSQL's rule for pg_visible_in_snapshot
// written out here: below xmin visible, from xmax on not, in between visible unless listed.

const visible = (x: bigint, s: Snapshot): boolean => x < s.xmin || (x < s.xmax && !s.xip.includes(x))

const snapshot: fc.Arbitrary<Snapshot> = fc.tuple(fc.bigInt({ min: 3n, max: 60n }), fc.bigInt({ min: 0n, max: 20n }), fc.array(fc.bigInt({ min: 0n, max: 19n }), { maxLength: 10 }))
  .map(([xmin, span, offsets]) => {
    const xmax = xmin + span
    const xip = [...new Set(offsets.map(o => xmin + o).filter(x => x < xmax))].sort((a, b) => a < b ? -1 : 1)
    return { xmin: xip.length > 0 ? xip[0]! : xmin, xmax, xip }
  })

t.test('parse and text are inverse; malformed texts and out-of-order lists are refused', async t => {
  t.same(parseSnapshot('10:20:12,15'), { xmin: 10n, xmax: 20n, xip: [12n, 15n] })
  t.equal(snapshotText(parseSnapshot('10:20:')!), '10:20:')
  for (const bad of ['', '10:20', '20:10:', '10:20:15,12', '10:20:12,12', '10:20:9', '10:20:20', '0:0:', 'a:b:', '10:20:12,']) {
    t.equal(parseSnapshot(bad), undefined, bad)
  }
})

t.test('intersect: visible exactly when visible in both', async t => {
  await checkProperty(t, 'snapshot intersection', fc.tuple(snapshot, snapshot), async ([a, b]) => {
    const both = intersect(a, b)
    if (parseSnapshot(snapshotText(both)) === undefined) throw new Error(`not a valid snapshot: ${snapshotText(both)}`)
    for (let x = 1n; x < 100n; x++) {
      if (visible(x, both) !== (visible(x, a) && visible(x, b))) throw new Error(`${x}: ${snapshotText(a)} ∩ ${snapshotText(b)} = ${snapshotText(both)}`)
    }
  }, 500)
})

t.test(`bounded: at most ${MAX_IN_PROGRESS} listed, and never more visible than before`, async t => {
  const many = parseSnapshot('10:40:11,12,13,14,15,16,17,18,19')!
  const small = bounded(many)
  t.equal(small.xip.length, MAX_IN_PROGRESS)
  t.equal(snapshotText(small), '10:17:11,12,13,14,15,16')
  await checkProperty(t, 'snapshot bound', snapshot, async s => {
    const b = bounded(s)
    for (let x = 1n; x < 100n; x++) if (visible(x, b) && !visible(x, s)) throw new Error(`${x} visible in ${snapshotText(b)}, not in ${snapshotText(s)}`)
  }, 500)
})
