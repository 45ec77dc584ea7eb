import fc from 'fast-check'
import type pg from 'pg'
import type { Tenant } from './fixtures.js'

// Writers as the recruiters' app makes them, drawn at random for the property tests of sync
// and webhooks (test/jobs/sync/sync.property.test.ts, test/webhooks/webhooks.property.test.ts):
// screens inserted, updated, moved and deleted, jobs renamed, created, deleted and moved between
// two organizations, questions added and deleted, a few to a transaction.

export type Op =
  | { kind: 'insertScreen' | 'updateScreen' | 'deleteScreen' | 'moveScreen' | 'renameJob' | 'deleteJob' | 'moveJob' | 'addQuestion' | 'deleteQuestion', job: number, other: number, score: number }
  | { kind: 'createJob', job: number, other: number, score: number }
export const KINDS = ['insertScreen', 'insertScreen', 'updateScreen', 'deleteScreen', 'moveScreen', 'renameJob', 'deleteJob', 'moveJob', 'moveJob', 'addQuestion', 'addQuestion', 'deleteQuestion', 'createJob'] as const
export const op = fc.record({ kind: fc.constantFrom(...KINDS), job: fc.nat(7), other: fc.nat(7), score: fc.integer({ min: 0, max: 100 }) }) as fc.Arbitrary<Op>
// Writers: transactions of a few operations, each held open for a while before committing.
export const transaction = fc.record({ ops: fc.array(op, { minLength: 1, maxLength: 3 }), holdMs: fc.integer({ min: 0, max: 15 }) })
export const scenario = fc.record({
  jobs: fc.integer({ min: 1, max: 6 }),
  writers: fc.array(fc.array(transaction, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 3 }),
  pageSize: fc.integer({ min: 1, max: 4 }),
})

export async function apply (client: pg.PoolClient, o: Op, ids: string[], home: Tenant, away: Tenant): Promise<void> {
  const job = ids[o.job % ids.length]!
  const other = ids[o.other % ids.length]!
  const screen = async (): Promise<string | undefined> => (await client.query<{ id: string }>('SELECT id FROM screens WHERE job_id = $1 ORDER BY id LIMIT 1', [job])).rows[0]?.id
  switch (o.kind) {
    case 'insertScreen':
      await client.query(o.score % 2 === 0
        ? 'INSERT INTO screens (job_id, status, score, started_at, completed_at) SELECT id, \'completed\', $2::int, now() - interval \'10 days\', now() - make_interval(hours => $2::int) FROM jobs WHERE id = $1'
        : 'INSERT INTO screens (job_id, status, started_at) SELECT id, \'in_progress\', now() FROM jobs WHERE id = $1 AND $2::int IS NOT NULL', [job, o.score])
      break
    case 'updateScreen': {
      const id = await screen()
      if (id !== undefined) await client.query('UPDATE screens SET status = \'completed\', score = $2, completed_at = coalesce(completed_at, greatest(now(), started_at)) WHERE id = $1', [id, o.score])
      break
    }
    case 'deleteScreen': {
      const id = await screen()
      if (id !== undefined) await client.query('DELETE FROM screens WHERE id = $1', [id])
      break
    }
    case 'moveScreen': {
      const id = await screen()
      if (id !== undefined) await client.query('UPDATE screens SET job_id = $2 WHERE id = $1 AND EXISTS (SELECT 1 FROM jobs WHERE id = $2)', [id, other])
      break
    }
    case 'renameJob':
      await client.query('UPDATE jobs SET title = $2, updated_at = now() WHERE id = $1', [job, `renamed ${o.score}`])
      break
    case 'deleteJob':
      if (o.score % 3 === 0) await client.query('DELETE FROM jobs WHERE id = $1', [job])
      break
    case 'moveJob': {
      // Away and back: the partner must see it leave, and come back.
      const [to, user] = o.score % 2 === 0 ? [away.organizationId, away.userId] : [home.organizationId, home.userId]
      await client.query('UPDATE jobs SET organization_id = $2, user_id = $3 WHERE id = $1', [job, to, user])
      break
    }
    case 'addQuestion':
      await client.query('INSERT INTO questions (job_id, position, text) SELECT id, coalesce((SELECT max(position) FROM questions WHERE job_id = $1), 0) + 1, $2 FROM jobs WHERE id = $1', [job, `Q ${o.score}`])
      break
    case 'deleteQuestion':
      await client.query('DELETE FROM questions WHERE id = (SELECT id FROM questions WHERE job_id = $1 ORDER BY position LIMIT 1)', [job])
      break
    case 'createJob':
      await client.query(`INSERT INTO jobs (organization_id, user_id, title, company_name, description, slug, share_token, updated_at)
        VALUES ($1, $2, 'created', 'C', 'D', 'job-' || gen_random_uuid(), md5(random()::text) || md5(random()::text), now())`, [home.organizationId, home.userId])
      break
  }
}
