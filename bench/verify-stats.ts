// The drift check as an operator runs it (`npm run admin -- verify-stats`), timed on the bench's
// dataset: issue 21 asks for a bounded time on the 2M screens.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { NodeBinary } from './servers.js'

export interface VerifyStatsRun { seconds: number, jobsChecked: number, exitCode: number, drift: Record<string, unknown> }

const ADMIN = join(import.meta.dirname, '../scripts/admin.ts')

export async function timeVerifyStats (node: NodeBinary, ownerUrl: string): Promise<VerifyStatsRun> {
  const t0 = performance.now()
  const result = await promisify(execFile)(node.path, ['--import', 'tsx', ADMIN, 'verify-stats'], {
    env: { ...process.env, DATABASE_URL: ownerUrl, LOG_LEVEL: 'silent' }, maxBuffer: 64 * 1024 * 1024,
  }).then(r => ({ ...r, code: 0 }), (error: { stdout: string, stderr: string, code: number }) => ({ stdout: error.stdout, stderr: error.stderr, code: error.code }))
  const seconds = (performance.now() - t0) / 1000
  const out = JSON.parse(result.stdout) as { jobsChecked: number, drift: Record<string, unknown> }
  return { seconds, jobsChecked: out.jobsChecked, exitCode: result.code, drift: out.drift }
}

export const verifyStatsMarkdown = (r: VerifyStatsRun): string =>
  `\`npm run admin -- verify-stats\` on the whole database: ${r.jobsChecked.toLocaleString('en')} jobs in ${r.seconds.toFixed(1)} s (the command, start to exit), exit ${r.exitCode}, drift ${JSON.stringify({ ...r.drift, jobIds: undefined })}.`
