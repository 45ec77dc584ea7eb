import t from 'tap'
import { createTestDatabase } from '../helpers/database.js'
import { createJob, createTenant } from '../helpers/fixtures.js'

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

// What each kind of write appends (migration 20261125210000_summary_deltas_single_rows): a
// single-row write its own delta, with no aggregate to start; a multi-row insert one delta
// per (job, bucket); an update row by row, nothing when the summaries do not change. Read
// from screen_summary_deltas itself, so that a trigger that appended too much, or nothing,
// fails here even where the sums would still come out right.
t.test('the deltas each write appends', async t => {
  const tenant = await createTenant(prisma)
  const job = await createJob(prisma, tenant)
  const other = await createJob(prisma, tenant)
  type Delta = { bucket: Date | null, in_progress: number, completed: number, expired: number, scored: number, score_sum: string }
  let seen = 0n
  // The deltas appended since the last call, oldest first, as plain values.
  const appended = async (): Promise<Array<Omit<Delta, 'bucket'> & { job: string, bucket: string | null }>> => {
    const rows = await prisma.$queryRaw<Array<Delta & { id: bigint, job_id: string }>>`
      SELECT id, job_id::text, bucket, in_progress, completed, expired, scored, score_sum::text
      FROM screen_summary_deltas WHERE job_id IN (${job.id}::uuid, ${other.id}::uuid) AND id > ${seen} ORDER BY id`
    if (rows.length > 0) seen = rows[rows.length - 1]!.id
    return rows.map(({ id: _, job_id: jobId, bucket, ...figures }) => ({ job: jobId === job.id ? 'job' : 'other', bucket: bucket?.toISOString() ?? null, ...figures }))
  }
  const segment = '2026-03-04T12:00:00.000Z' // a Wednesday: its segment starts Monday 12:00
  const segmentStart = '2026-03-02T12:00:00.000Z'
  const window = '2026-03-08T23:40:00.000Z' // Sunday 23:40: quarter hour 23:30 of a boundary window
  const windowQuarter = '2026-03-08T23:30:00.000Z'
  const none = { in_progress: 0, completed: 0, expired: 0, scored: 0 }

  const [inserted] = await prisma.$queryRaw<Array<{ id: string }>>`
    INSERT INTO screens (job_id, status, score, started_at, completed_at)
    VALUES (${job.id}::uuid, 'completed', 0.1, '2026-03-01Z', ${segment}::timestamptz) RETURNING id::text`
  const id = inserted!.id
  t.same(await appended(), [{ job: 'job', bucket: segmentStart, ...none, completed: 1, scored: 1, score_sum: '0.1' }], 'a single-row insert: its own delta')

  await prisma.$executeRaw`UPDATE screens SET score = 0.30000000000000004 WHERE id = ${id}::uuid`
  t.same(await appended(), [{ job: 'job', bucket: segmentStart, ...none, score_sum: '0.20000000000000004' }], 'a score changed in place: one delta, the exact difference')

  await prisma.$executeRaw`UPDATE screens SET started_at = '2026-02-28Z', completed_at = completed_at + interval '1 hour' WHERE id = ${id}::uuid`
  t.same(await appended(), [], 'another column, and a completion moved within its bucket: nothing')

  await prisma.$executeRaw`UPDATE screens SET completed_at = ${window}::timestamptz, score = NULL WHERE id = ${id}::uuid`
  t.same(await appended(), [
    { job: 'job', bucket: segmentStart, ...none, completed: -1, scored: -1, score_sum: '-0.30000000000000004' },
    { job: 'job', bucket: windowQuarter, ...none, completed: 1, score_sum: '0' },
  ], 'a completion moved to another bucket, unscored: out of the old one, into the new one')

  await prisma.$executeRaw`UPDATE screens SET job_id = ${other.id}::uuid WHERE id = ${id}::uuid`
  t.same(await appended(), [
    { job: 'job', bucket: windowQuarter, ...none, completed: -1, score_sum: '0' },
    { job: 'other', bucket: windowQuarter, ...none, completed: 1, score_sum: '0' },
  ], 'a screen moved to another job: out of one, into the other')

  await prisma.$executeRaw`UPDATE screens SET status = 'expired', completed_at = NULL WHERE id = ${id}::uuid`
  t.same(await appended(), [
    { job: 'other', bucket: windowQuarter, ...none, completed: -1, score_sum: '0' },
    { job: 'other', bucket: null, ...none, expired: 1, score_sum: '0' },
  ], 'a status change: two deltas')

  await prisma.$executeRaw`UPDATE screens SET score = 12 WHERE id = ${id}::uuid`
  t.same(await appended(), [], 'a score on a screen that is not completed: nothing (only completed screens are scored)')

  await prisma.$executeRaw`
    INSERT INTO screens (job_id, status, score, started_at, completed_at)
    VALUES (${job.id}::uuid, 'completed', 1, '2026-03-01Z', ${segment}::timestamptz), (${job.id}::uuid, 'completed', 2, '2026-03-01Z', ${segment}::timestamptz),
           (${job.id}::uuid, 'in_progress', NULL, '2026-03-01Z', NULL), (${other.id}::uuid, 'completed', 3, '2026-03-01Z', ${window}::timestamptz)`
  const grouped = await appended()
  t.same(grouped.sort((a, b) => `${a.job}${a.bucket}`.localeCompare(`${b.job}${b.bucket}`)), [
    { job: 'job', bucket: segmentStart, ...none, completed: 2, scored: 2, score_sum: '3' },
    { job: 'job', bucket: null, ...none, in_progress: 1, score_sum: '0' },
    { job: 'other', bucket: windowQuarter, ...none, completed: 1, scored: 1, score_sum: '3' },
  ], 'a multi-row insert: one delta per job and bucket')

  await prisma.$executeRaw`DELETE FROM screens WHERE job_id = ${job.id}::uuid AND status = 'completed'`
  t.same(await appended(), [{ job: 'job', bucket: segmentStart, ...none, completed: -2, scored: -2, score_sum: '-3' }], 'a delete: one delta per job and bucket')
})
