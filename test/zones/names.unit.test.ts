import t from 'tap'
import { readTimeZone, tzProblem } from '../../src/zones/names.js'
import { zoneRules } from '../../src/zones/rules.js'

const rules = zoneRules()
const read = (name: string) => readTimeZone(name, rules)

t.test('a name is read as the zone it stands for in the service\'s rules, case-insensitively', async t => {
  for (const [name, zone] of [['Europe/Berlin', 'Europe/Berlin'], ['europe/BERLIN', 'Europe/Berlin'], ['CET', 'Europe/Brussels'], ['cet', 'Europe/Brussels'], ['EST', 'America/Panama'],
    ['US/Pacific', 'America/Los_Angeles'], ['Canada/Pacific', 'America/Vancouver'], ['Japan', 'Asia/Tokyo'], ['Asia/Calcutta', 'Asia/Kolkata'], ['UTC', 'Etc/UTC'], ['Etc/UTC', 'Etc/UTC'], ['Zulu', 'Etc/UTC'],
    ['Etc/GMT+5', 'Etc/GMT+5'], ['America/Vancouver', 'America/Vancouver'], ['Africa/El_Aaiun', 'Africa/El_Aaiun']]) {
    t.same(read(name!), { zone }, `${name} as ${zone}`)
  }
})

t.test('ICU\'s legacy IDs and names IANA dropped are refused, with the zone meant where there is one; other names without a reason', async t => {
  for (let round = 0; round < 2; round++) { // the second from the memo
    t.match(read('IST'), { refused: /not an IANA name.*did you mean Asia\/Kolkata\?$/ }, `IST, round ${round}`)
    t.match(read('ist'), { refused: /did you mean Asia\/Kolkata\?$/ }, `ist, round ${round}`)
    t.match(read('PST'), { refused: /did you mean America\/Los_Angeles\?$/ })
    t.match(read('SystemV/EST5EDT'), { refused: /legacy IDs$/ }, 'no suggestion of another legacy ID')
    t.match(read('US/Pacific-New'), { refused: new RegExp(`^is not a zone or link of tzdata ${rules.version}; did you mean America/Los_Angeles\\?$`) }, 'dropped by IANA in 2020b; ICU still knows it')
    for (const bad of ['Mars/Base', 'UTC+3', '+05:30', 'EST5EDT,M3.2.0,M11.1.0', 'a'.repeat(70)]) t.same(read(bad), { refused: '' }, bad)
  }
  t.match(tzProblem('IST', 'why').message, /^must be an IANA time zone name: .*; "IST" why$/)
  t.notMatch(tzProblem('x'.repeat(500), '').message, 'xxx', 'a name the runtime does not know is not quoted')
})

t.test('every name of the rules is read as a zone of the rules; names are told apart by more than case', async t => {
  const names = rules.names()
  t.equal(new Set(names.map(n => n.toLowerCase())).size, names.length)
  const unread = names.filter(name => !('zone' in read(name)) || rules.transitionsOf((read(name) as { zone: string }).zone) === undefined)
  t.same(unread, [])
})
