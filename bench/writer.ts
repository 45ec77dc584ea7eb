// The write side of `npm run bench`, in a process of its own: `connections` clients each
// run one workload's statement in a loop (autocommit: one transaction per statement) for
// `seconds`, and the count goes to stdout as JSON. Options as JSON on stdin: with thousands
// of ids they exceed what one argument may hold (E2BIG).
import pg from 'pg'

export type Workload = 'insert' | 'update score'

export interface WriterOptions {
  url: string
  workload: Workload
  /** The jobs written to, one picked at random per statement. */
  jobIds: string[]
  /** For updates: the screens updated, one picked at random per statement. */
  screenIds: string[]
  connections: number
  seconds: number
}

let input = ''
for await (const chunk of process.stdin) input += String(chunk)
const options = JSON.parse(input) as WriterOptions
const pick = <T>(values: T[]): T => values[Math.floor(Math.random() * values.length)]!
// A completed screen, scored with a decimal like the dataset's, completed at a random
// instant of the last week: a week's mix of the summaries' two kinds of row (about 15% of
// completions fall in a boundary window, the rest in a segment), whatever the time of day the
// bench runs at. Writers of one job still meet on the same few rows.
const INSERT = {
  name: 'insert',
  text: "INSERT INTO screens (job_id, status, score, started_at, completed_at) SELECT $1, 'completed', $2, t - interval '20 minutes', t FROM (SELECT now() - $3 * interval '1 second' AS t) c",
}
const WEEK_S = 7 * 86_400
const UPDATE = { name: 'update', text: 'UPDATE screens SET score = $2 WHERE id = $1' }
const score = (): number => Math.round(Math.random() * 1000) / 10

async function writer (deadline: number): Promise<number> {
  const client = new pg.Client({ connectionString: options.url })
  await client.connect()
  let done = 0
  try {
    while (performance.now() < deadline) {
      if (options.workload === 'insert') await client.query({ ...INSERT, values: [pick(options.jobIds), score(), Math.random() * WEEK_S] })
      else await client.query({ ...UPDATE, values: [pick(options.screenIds), score()] })
      done++
    }
  } finally {
    await client.end()
  }
  return done
}

const started = performance.now()
const counts = await Promise.all(Array.from({ length: options.connections }, async () => await writer(started + options.seconds * 1000)))
const seconds = (performance.now() - started) / 1000
process.stdout.write(JSON.stringify({ transactions: counts.reduce((a, b) => a + b, 0), seconds }))
