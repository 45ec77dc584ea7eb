import { Type } from '@sinclair/typebox'
import { sql } from '../db/sql.js'
import type { SqlReader, SqlWriter } from '../db/sql-reader.js'
import { demoData } from './seed.js'

// What the recruiters' app does to a demo job, for a newcomer to see a webhook fire (`npm run
// demo -- complete-screen`, scripts/demo.ts): plain SQL writes in a transaction of their own,
// as that app makes them, so every trigger and the change log run as they do in production.

export interface DemoChange { jobId: string, title: string, did: string }

/** The demo job a change goes to: `jobId`, else the banner's (the Pro organization's branded one). */
type Db = SqlReader & SqlWriter

const JobRow = Type.Object({ id: Type.String(), title: Type.String() })
const ScreenRow = Type.Object({ id: Type.String() })

export async function demoJob (db: Db, jobId?: string): Promise<{ id: string, title: string }> {
  const id = jobId ?? demoData().sampleJobId
  const [job] = await db.rows(JobRow, sql`SELECT id::text AS id, title FROM jobs WHERE id = ${id}::uuid`)
  if (job === undefined) throw new Error(`no job ${id}: run npm run db:seed, or give --job the id of one`)
  return job
}

/** A candidate finishes a screen of the job: one in progress is completed with a score (a new one when none is). */
export async function completeScreen (db: Db, jobId?: string): Promise<DemoChange> {
  const job = await demoJob(db, jobId)
  const score = Math.round(500 + Math.random() * 500) / 10
  const done = await completeOldestScreen(db, job.id, score)
  if (done === undefined) {
    await db.execute(sql`INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES (${job.id}::uuid, 'completed', ${score}, now() - interval '20 minutes', now())`)
  }
  return { jobId: job.id, title: job.title, did: `a screen ${done === undefined ? 'taken and ' : ''}completed, score ${score}` }
}

/** The job's oldest screen in progress completed with `score`; undefined when none is in progress. */
export async function completeOldestScreen (db: Db, jobId: string, score: number): Promise<{ id: string } | undefined> {
  const [done] = await db.rows(ScreenRow, sql`
    UPDATE screens SET status = 'completed', score = ${score}, completed_at = now()
    WHERE id = (SELECT id FROM screens WHERE job_id = ${jobId}::uuid AND status = 'in_progress' ORDER BY started_at LIMIT 1)
    RETURNING id::text AS id`)
  return done
}

/** A recruiter retitles the job. */
export async function renameJob (db: Db, title: string, jobId?: string): Promise<DemoChange> {
  const job = await demoJob(db, jobId)
  await db.execute(sql`UPDATE jobs SET title = ${title}, updated_at = now() WHERE id = ${job.id}::uuid`)
  return { jobId: job.id, title, did: `retitled from "${job.title}"` }
}
