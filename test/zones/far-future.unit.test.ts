import t from 'tap'
import { extendToYear3000, zoneRules } from '../../src/zones/rules.js'
import { intlKnows, intlOffset } from '../helpers/intl-zones.js'

// Years 2500 to 2999, which completions and ranges may name (issue 40, part 2): the service's
// rules (moment-timezone's data ends in 2499; the rest is its last 400 years again) against
// Intl, which computes a zone's last rule for any year (ICU of this runtime). A zone whose
// rules Intl reads the same way through the 2400s (their tzdata releases agree there) must
// agree through 2999, at every one of the service's changes (a second before and at it) and
// between any two of them.

const rules = zoneRules()
const at = (iso: string): number => Date.parse(iso) / 1000
const zones = [...new Set(rules.names().map(name => rules.zoneOf(name)!))].sort()

/**
 * The instants where the service's offset and Intl's are compared in [from, to): around each
 * of the service's changes and between two of them, and the 15th of January, April, July and
 * October of every year (where a change Intl makes and the service does not shows).
 */
function checks (zone: string, from: number, to: number): Array<{ at: number, ours: number }> {
  const { transitions, offsets } = rules.transitionsOf(zone)!
  const inForce = (s: number): number => {
    let [lo, hi] = [0, transitions.length] // the number of changes at or before s
    while (lo < hi) { const mid = (lo + hi) >> 1; if (transitions[mid]! <= s) lo = mid + 1; else hi = mid }
    return offsets[lo]!
  }
  const instants: number[] = []
  const points = [from, ...transitions.filter(x => x >= from && x < to), to]
  for (let i = 0; i + 1 < points.length; i++) instants.push(points[i]!, Math.floor((points[i]! + points[i + 1]!) / 2), points[i + 1]! - 1)
  for (let year = new Date(from * 1000).getUTCFullYear(); year < new Date(to * 1000).getUTCFullYear(); year++) {
    for (const month of [0, 3, 6, 9]) instants.push(Date.UTC(year, month, 15, 12) / 1000)
  }
  return instants.filter(s => s >= from && s < to).map(s => ({ at: s, ours: inForce(s) }))
}
const differs = (zone: string, from: number, to: number): string | undefined => {
  const bad = checks(zone, from, to).find(c => intlOffset(zone, c.at) !== c.ours)
  return bad === undefined ? undefined : `${new Date(bad.at * 1000).toISOString()}: ours ${bad.ours}, Intl ${intlOffset(zone, bad.at)}`
}

t.test('through 2999, every zone Intl reads as the rules do in the 2400s: the same offsets', async t => {
  const known = zones.filter(intlKnows)
  const agreeing = known.filter(zone => differs(zone, at('2400-01-01T00:00:00Z'), at('2500-01-01T00:00:00Z')) === undefined)
  const failures = agreeing.map(zone => [zone, differs(zone, at('2500-01-01T00:00:00Z'), at('3000-01-01T00:00:00Z'))]).filter(([, d]) => d !== undefined)
  const withChanges = agreeing.filter(zone => rules.transitionsOf(zone)!.transitions.some(s => s >= at('2500-01-01T00:00:00Z')))
  t.comment(`figures: far future: ${zones.length} zones, ${known.length} known to Intl (Node ${process.versions.node}, tzdata ${process.versions.tz}), ${agreeing.length} read alike in the 2400s, ${withChanges.length} of them with changes in 2500-2999; differing there: ${failures.length}`)
  t.ok(agreeing.length > zones.length * 0.9, 'most zones are compared')
  t.ok(withChanges.length >= 100, 'including the zones with daylight saving')
  t.same(failures, [], 'none differs from 2500 to 2999')
})

t.test('the copy: the last 400 years again, to 3000; a zone whose changes end earlier is kept as it is', async t => {
  const ny = rules.transitionsOf('America/New_York')!
  t.same(ny.transitions.slice(-2).map(s => new Date(s * 1000).toISOString()), ['2999-03-10T07:00:00.000Z', '2999-11-03T06:00:00.000Z'], 'New York: second Sunday of March, first of November, 2999')
  t.equal(ny.offsets.at(-1), -5 * 3600)
  const kolkata = rules.transitionsOf('Asia/Kolkata')!
  t.ok(kolkata.transitions.at(-1)! < at('1950-01-01T00:00:00Z'), 'Kolkata: no change since 1945, none added')
  const yearly = { transitions: [at('2100-03-01T00:00:00Z'), at('2499-03-01T00:00:00Z')], offsets: [0, 3600, 7200] }
  t.throws(() => extendToYear3000(yearly, 2499), /do not repeat after 400 years/, 'rules that do not repeat are refused, not copied')
})
