import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { sql } from '../db/sql.js'
import { clientReader } from '../db/sql-reader.js'
import { runPeriodically } from './periodic.js'

// The change log behind incremental sync (migration 20261125140000_job_changes) grows with
// every writer transaction; prune_job_changes() removes what is past the retention (tokens
// older than it then answer 410) and collapses each job's finished transactions into one
// row. Every instance tries on a timer; the database lets one at a time run. On the primary.
// A failed run leaves the log to grow a little; sync answers stay exact.

export default fp(async function changeLogPrunePlugin (app: FastifyInstance, { intervalMs, retentionHours }: { intervalMs: number, retentionHours: number }) {
  if (intervalMs === 0) return
  runPeriodically(app, 'pruning the change log', intervalMs, async () => {
    await clientReader(app.database.prisma).execute(sql`SELECT prune_job_changes(${retentionHours * 3600}::int)`)
  })
}, { name: 'change-log-prune', dependencies: ['database', 'draining'] })
