import type { SqlReader } from '../../db/sql-reader.js'
import { sql } from '../../db/sql.js'
import { jobsWithStats, JobWithStatsRowSchema, withStats, type JobWithStats } from './job-rows.js'

/** A job with its counts; null when not the caller's. One statement (job-rows.ts). */
export async function findJob (reader: SqlReader, organizationId: string, jobId: string): Promise<JobWithStats | null> {
  const rows = await reader.rows(JobWithStatsRowSchema, sql`${jobsWithStats(sql`jobs`)}
    WHERE j.id = ${jobId}::uuid AND j.organization_id = ${organizationId}::uuid`)
  return rows[0] === undefined ? null : withStats(rows[0])
}
