import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { runPeriodically } from './periodic.js'

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
  // A fold that fails (the database down, a job deleted under it) leaves the deltas for the
  // next tick; the answers stay exact meanwhile.
  runPeriodically(app, 'folding the summary deltas', intervalMs, async () => {
    for (let i = 0; i < BATCHES_PER_TICK; i++) {
      const [row] = await app.database.prisma.$queryRaw<Array<{ moved: number }>>`SELECT fold_screen_summary_deltas(${FOLD_BATCH}::int) AS moved`
      if ((row?.moved ?? 0) < FOLD_BATCH || app.draining()) break
    }
  })
}, { name: 'summary-fold', dependencies: ['prisma', 'draining'] })
