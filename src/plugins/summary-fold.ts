import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { FOLD_BATCH, foldBatch } from '../db/summary-fold.js'
import { runPeriodically } from './periodic.js'
import { clientReader } from '../db/sql-reader.js'

// Each unfolded delta costs a read a little (db/summary-fold.ts): every instance tries to fold
// on a timer; the database lets one fold at a time and the others return at once. On the
// primary: a replica cannot write.

/** Batches per tick at most, so that a backlog (a bulk load) is worked off without hogging a connection. */
const BATCHES_PER_TICK = 10

export default fp(async function summaryFoldPlugin (app: FastifyInstance, { intervalMs }: { intervalMs: number }) {
  if (intervalMs === 0) return
  // A fold that fails (the database down, a job deleted under it) leaves the deltas for the
  // next tick; the answers stay exact meanwhile.
  runPeriodically(app, 'folding the summary deltas', intervalMs, async () => {
    for (let i = 0; i < BATCHES_PER_TICK; i++) {
      if (await foldBatch(clientReader(app.database.prisma)) < FOLD_BATCH || app.draining()) break
    }
  })
}, { name: 'summary-fold', dependencies: ['database', 'draining'] })
