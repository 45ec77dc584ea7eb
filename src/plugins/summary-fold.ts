import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

// Writers of screens append deltas to the summaries (migration 20261123200000_summary_deltas);
// readers add a job's unfolded deltas to its summary rows, so answers are exact whatever is
// folded, but each unfolded delta costs a read a little. Every instance tries to fold on a
// timer; the database lets one fold at a time and the others return at once. On the primary:
// a replica cannot write.

/** Deltas moved per statement: one statement stays well under the statement timeout. */
export const FOLD_BATCH = 20_000
/** Batches per tick at most, so that a backlog (a bulk load) is worked off without hogging a connection. */
const BATCHES_PER_TICK = 10

export default fp(async function summaryFoldPlugin (app: FastifyInstance, { intervalMs }: { intervalMs: number }) {
  if (intervalMs === 0) return
  let running: Promise<void> | undefined
  let failing = false
  const tick = async (): Promise<void> => {
    try {
      for (let i = 0; i < BATCHES_PER_TICK; i++) {
        const [row] = await app.database.prisma.$queryRaw<Array<{ moved: number }>>`SELECT fold_screen_summary_deltas(${FOLD_BATCH}::int) AS moved`
        if ((row?.moved ?? 0) < FOLD_BATCH) break
      }
      if (failing) app.log.info('folding the summary deltas again')
      failing = false
    } catch (err) {
      // A fold that fails (the database down, a job deleted under it) leaves the deltas for
      // the next tick; the answers stay exact meanwhile.
      if (!failing) app.log.warn({ err }, 'could not fold the summary deltas; will retry')
      failing = true
    }
  }
  const timer = setInterval(() => { running ??= tick().finally(() => { running = undefined }) }, intervalMs)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await running
  })
}, { name: 'summary-fold', dependencies: ['prisma'] })
