import pg from 'pg'
import type { Prisma } from '../../src/db/database.js'
import { sleep } from './sleep.js'

// Writers on connections of their own, as the recruiters' app makes them, for the tests of
// what sync costs writers (test/jobs/sync/writers.test.ts, lock-matrix.test.ts).

export type Session = pg.Client & { pid: number }

/** A connection to `url`, closed when the test ends. */
export async function connectSession (t: { teardown: (fn: () => unknown) => void }, url: string): Promise<Session> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.teardown(async () => { await client.end() })
  return Object.assign(client, { pid: (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid })
}

/**
 * Whether `session` waits for a lock while `statement` runs on it: pg_stat_activity is polled
 * (by `observer`, on another connection) until the statement settles or the session waits.
 */
export async function waitsForALock (observer: Prisma, session: Session, statement: Promise<unknown>): Promise<boolean> {
  const state = { settled: false }
  statement.then(() => { state.settled = true }, () => { state.settled = true })
  for (let i = 0; i < 1000 && !state.settled; i++) {
    const rows = await observer.$queryRaw<Array<{ wait: string | null }>>`SELECT wait_event_type AS wait FROM pg_stat_activity WHERE pid = ${session.pid}::int`
    if (rows[0]?.wait === 'Lock') return true
    await sleep(5)
  }
  if (!state.settled) throw new Error('neither settled nor waiting for a lock after 5 s')
  return false
}
