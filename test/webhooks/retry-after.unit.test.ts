import t from 'tap'
import { MAX_RETRY_AFTER_MS, retryAfter } from '../../src/webhooks/attempt-result.js'

// An endpoint's Retry-After is honoured up to a day: a larger one (a number of seconds past
// a date's range made the retry's time an Invalid Date, and the job threw at every run) or
// a date years ahead is read as a day; what cannot be read is ignored.

t.equal(retryAfter('2'), 2000)
t.equal(retryAfter(' 120 '), 120_000)
t.equal(retryAfter('99999999999999'), MAX_RETRY_AFTER_MS, 'seconds past a date\'s range: a day')
t.equal(retryAfter('9'.repeat(40)), MAX_RETRY_AFTER_MS, 'digits past a number\'s precision: a day')
t.equal(retryAfter(new Date(Date.now() + 3 * 86_400_000).toUTCString()), MAX_RETRY_AFTER_MS, 'a date three days ahead: a day')
t.equal(retryAfter('Wed, 21 Oct 2015 07:28:00 GMT'), 0, 'a date past: now')
const inAnHour = retryAfter(new Date(Date.now() + 3_600_000).toUTCString())!
t.ok(inAnHour > 3_590_000 && inAnHour <= 3_600_000, 'a date an hour ahead: an hour')
t.equal(retryAfter('soon'), undefined)
t.equal(retryAfter('-5'), undefined)
t.equal(retryAfter(undefined), undefined)
t.ok(Number.isFinite(new Date(Date.now() + retryAfter('99999999999999')!).getTime()), 'a time a Date can hold')
