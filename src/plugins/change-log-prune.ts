import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

// The change log behind incremental sync (migration 20261125140000_job_changes) grows with
// every writer transaction; prune_job_changes() removes what is past the retention (tokens
// older than it then answer 410) and collapses each job's finished transactions into one
// row. Every instance tries on a timer; the database lets one at a time run. On the primary.

export default fp(async function changeLogPrunePlugin (app: FastifyInstance, { intervalMs, retentionHours }: { intervalMs: number, retentionHours: number }) {
  if (intervalMs === 0) return
  let running: Promise<void> | undefined
  let failing = false
  const tick = async (): Promise<void> => {
    try {
      await app.database.prisma.$queryRaw`SELECT prune_job_changes(${retentionHours * 3600}::int)`
      if (failing) app.log.info('pruning the change log again')
      failing = false
    } catch (err) {
      // The log only grows meanwhile; sync answers stay exact.
      if (!failing) app.log.warn({ err }, 'could not prune the change log; will retry')
      failing = true
    }
  }
  const timer = setInterval(() => { running ??= tick().finally(() => { running = undefined }) }, intervalMs)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await running
  })
}, { name: 'change-log-prune', dependencies: ['prisma'] })
