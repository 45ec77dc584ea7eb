import t from 'tap'
import { createTestDatabase } from '../helpers/database.js'

// The summaries' bucket function, checked against the rule it implements, computed here
// without the database (docs/summaries-design.md), and checked to be inlined: run as a
// function of its own it cost every single-row write 175,000 instructions of the backend
// (migration 20261123231000_completion_bucket_inlined).

const db = await createTestDatabase()
t.teardown(() => db.close())
const { prisma } = db

const MINUTE = 60_000
const WEEK = 7 * 24 * 60 * MINUTE
const SUNDAY_10H = Date.UTC(2000, 0, 2, 10)

/**
 * Where a completion at `ms` is summarised: before 1980 the instant itself; in the segment
 * from Monday 12:00 to Sunday 10:00 UTC, the segment's start; in the boundary window from
 * Sunday 10:00 to Monday 12:00 UTC, its quarter hour. (Whole milliseconds: the instants
 * below have no finer part.)
 */
function expectedBucket (ms: number): number {
  if (ms < Date.UTC(1980, 0, 1)) return ms
  const windowStart = SUNDAY_10H + Math.floor((ms - SUNDAY_10H) / WEEK) * WEEK
  if (ms - windowStart >= 26 * 60 * MINUTE) return windowStart + 26 * 60 * MINUTE
  return windowStart + Math.floor((ms - windowStart) / (15 * MINUTE)) * 15 * MINUTE
}

t.test('completion_bucket: the rule, at and beside every edge of a week, and NULL', async t => {
  const instants: number[] = []
  for (let week = -1100; week < 3000; week += 7) {
    const start = SUNDAY_10H + week * WEEK
    for (const offset of [0, 15 * MINUTE, 26 * 60 * MINUTE, 3 * 24 * 60 * MINUTE + 7]) {
      for (const d of [-1, 0, 1]) instants.push(start + offset + d)
    }
  }
  const rows = await prisma.$queryRawUnsafe<Array<{ t: Date, bucket: Date }>>(
    'SELECT t, completion_bucket(t) AS bucket FROM unnest($1::timestamptz[]) t',
    instants.map(ms => new Date(ms).toISOString()))
  t.equal(rows.length, instants.length)
  const wrong = rows.filter(row => row.bucket.getTime() !== expectedBucket(row.t.getTime()))
  t.same(wrong.slice(0, 3), [], `${instants.length} instants from 1978 to 2057, each in the bucket of the rule`)
  const [none] = await prisma.$queryRawUnsafe<Array<{ bucket: Date | null }>>('SELECT completion_bucket(NULL) AS bucket')
  t.equal(none?.bucket, null, 'NULL in, NULL out (as when it was STRICT)')
})

t.test('completion_bucket is inlined into the statements that call it', async t => {
  const plan = await prisma.$queryRawUnsafe<Array<{ 'QUERY PLAN': string }>>(
    'EXPLAIN (VERBOSE, COSTS OFF) SELECT completion_bucket(s.completed_at) FROM screens s')
  const text = plan.map(row => row['QUERY PLAN']).join('\n')
  t.match(text, /date_bin/, 'the plan computes the body')
  t.notMatch(text, /completion_bucket/, 'and calls no function of that name')
})
