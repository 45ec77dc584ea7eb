import t from 'tap'
import { readTimeZone, tzProblem } from '../../src/jobs/time-zones.js'
import { firstDifference, runtimeOffsets } from '../../src/jobs/zone-agreement.js'

t.test('a name is read as the runtime\'s canonical zone, which no abbreviation can match', async t => {
  for (const [name, zone] of [['Europe/Berlin', 'Europe/Berlin'], ['europe/BERLIN', 'Europe/Berlin'], ['CET', 'Europe/Brussels'], ['cet', 'Europe/Brussels'], ['EST', 'America/Panama'],
    ['EST5EDT', 'America/New_York'], ['US/Pacific', 'America/Los_Angeles'], ['Japan', 'Asia/Tokyo'], ['UTC', 'UTC'], ['Etc/UTC', 'UTC'], ['Zulu', 'UTC'], ['Etc/GMT+5', 'Etc/GMT+5']]) {
    t.same(readTimeZone(name!), { zone }, `${name} as ${zone}`)
  }
})

t.test('ICU\'s legacy IDs are refused, with the zone meant where there is one; other names without a reason', async t => {
  for (let round = 0; round < 2; round++) { // the second from the memo
    t.match(readTimeZone('IST'), { refused: /not an IANA name.*did you mean Asia\/Kolkata\?$/ }, `IST, round ${round}`)
    t.match(readTimeZone('ist'), { refused: /did you mean Asia\/Kolkata\?$/ }, `ist, round ${round}`)
    t.match(readTimeZone('PST'), { refused: /did you mean America\/Los_Angeles\?$/ })
    t.match(readTimeZone('SystemV/EST5EDT'), { refused: /legacy IDs$/ }, 'no suggestion of another legacy ID')
    for (const bad of ['Mars/Base', 'UTC+3', '+05:30', 'EST5EDT,M3.2.0,M11.1.0', 'a'.repeat(70)]) t.same(readTimeZone(bad), { refused: '' }, bad)
  }
  t.match(tzProblem('IST', 'why').message, /^must be an IANA time zone name: .*; "IST" why$/)
  t.notMatch(tzProblem('x'.repeat(500), '').message, 'xxx', 'a name the runtime does not know is not quoted')
})

t.test('the runtime\'s offsets and their first difference with the database\'s', async t => {
  const berlin = runtimeOffsets('Europe/Berlin').split(',').map(Number)
  t.equal(berlin.length, 8452, 'both ends of each week\'s window, 1970 to 2050')
  t.ok(berlin.includes(3600) && berlin.includes(7200), 'winter and summer')
  t.equal(firstDifference('Europe/Berlin', berlin.join(',')), undefined)
  const changed = [...berlin]
  changed[2000] = changed[2000]! + 3600
  t.same(firstDifference('Europe/Berlin', changed.join(',')), { at: new Date(Date.UTC(1970, 0, 4, 10) + 1000 * 7 * 86_400_000).toISOString(), database: berlin[2000]! + 3600, runtime: berlin[2000] })
  t.ok(firstDifference('Europe/Berlin', berlin.slice(0, -1).join(',')) !== undefined, 'a shorter list differs')
})
