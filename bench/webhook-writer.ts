// The webhooks bench's writer, a process of its own (bench/webhooks.ts): `rate` job changes a
// second (a title each, one transaction each) spread over `connections`, for `seconds`; each
// change's job and the time its commit returned, as JSON on stdout. Options as JSON on stdin.
import pg from 'pg'

interface Options { url: string, jobIds: string[], rate: number, connections: number, seconds: number }
let input = ''
for await (const chunk of process.stdin) input += String(chunk)
const options = JSON.parse(input) as Options
const changes: Array<[string, number]> = []
const started = Date.now()
const interval = 1000 * options.connections / options.rate

await Promise.all(Array.from({ length: options.connections }, async (_, c) => {
  const client = new pg.Client({ connectionString: options.url })
  await client.connect()
  try {
    // Paced: the i-th change of this connection is due at started + (c / connections + i) * interval.
    for (let i = 0; ; i++) {
      const due = started + (c / options.connections + i) * interval
      if (due > started + options.seconds * 1000) break
      const wait = due - Date.now()
      if (wait > 0) await new Promise(resolve => setTimeout(resolve, wait))
      const job = options.jobIds[Math.floor(Math.random() * options.jobIds.length)]!
      await client.query({ name: 'retitle', text: 'UPDATE jobs SET title = $2, updated_at = now() WHERE id = $1', values: [job, `bench ${c}:${i}`] })
      changes.push([job, Date.now()])
    }
  } finally {
    await client.end()
  }
}))
process.stdout.write(JSON.stringify({ changes, seconds: (Date.now() - started) / 1000 }))
