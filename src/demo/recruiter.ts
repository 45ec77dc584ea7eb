import type { Prisma as Db } from '../db/database.js'
import { demoData } from './seed.js'

// What the recruiters' app does to a demo job, for a newcomer to see a webhook fire (`npm run
// demo -- complete-screen`, scripts/demo.ts): plain SQL writes in a transaction of their own,
// as that app makes them, so every trigger and the change log run as they do in production.

export interface DemoChange { jobId: string, title: string, did: string }

/** The demo job a change goes to: `jobId`, else the banner's (the Pro organization's branded one). */
async function demoJob (prisma: Db, jobId?: string): Promise<{ id: string, title: string }> {
  const id = jobId ?? demoData().sampleJobId
  const [job] = await prisma.$queryRaw<Array<{ id: string, title: string }>>`SELECT id::text AS id, title FROM jobs WHERE id = ${id}::uuid`
  if (job === undefined) throw new Error(`no job ${id}: run npm run db:seed, or give --job the id of one`)
  return job
}

/** A candidate finishes a screen of the job: one in progress is completed with a score (a new one when none is). */
export async function completeScreen (prisma: Db, jobId?: string): Promise<DemoChange> {
  const job = await demoJob(prisma, jobId)
  const score = Math.round(500 + Math.random() * 500) / 10
  const [done] = await prisma.$queryRaw<Array<{ id: string }>>`
    UPDATE screens SET status = 'completed', score = ${score}, completed_at = now()
    WHERE id = (SELECT id FROM screens WHERE job_id = ${job.id}::uuid AND status = 'in_progress' ORDER BY started_at LIMIT 1)
    RETURNING id::text AS id`
  if (done === undefined) {
    await prisma.$executeRaw`INSERT INTO screens (job_id, status, score, started_at, completed_at) VALUES (${job.id}::uuid, 'completed', ${score}, now() - interval '20 minutes', now())`
  }
  return { jobId: job.id, title: job.title, did: `a screen ${done === undefined ? 'taken and ' : ''}completed, score ${score}` }
}

/** A recruiter retitles the job. */
export async function renameJob (prisma: Db, title: string, jobId?: string): Promise<DemoChange> {
  const job = await demoJob(prisma, jobId)
  await prisma.$executeRaw`UPDATE jobs SET title = ${title}, updated_at = now() WHERE id = ${job.id}::uuid`
  return { jobId: job.id, title, did: `retitled from "${job.title}"` }
}
