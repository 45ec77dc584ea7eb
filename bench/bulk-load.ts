// A customer importing its history: one INSERT … SELECT of many screens into one job, with
// the summaries kept (the triggers append one delta per bucket; then the fold) and without
// (the triggers off, then the job's summaries rebuilt from its screens). Issue 21 asks for
// the first to take at most 3 times as long as the second. Runs last: it adds screens.
import pg from 'pg'

export interface BulkLoadResult {
  screens: number
  /** The INSERT with the triggers on (the summaries exact when it commits: deltas). */
  withSummariesInsert: number
  /** Until every delta of the job was folded, from the INSERT's commit. */
  withSummariesFold: number
  /** The INSERT with the triggers off. */
  withoutInsert: number
  /** rebuild_screen_summaries of the job, after it. */
  withoutRebuild: number
  /** Deltas the INSERT appended. */
  deltas: number
  /** Both jobs' summaries equal their screens afterwards. */
  exact: boolean
}

// Two years of completions at any second, the dataset's mix of statuses and scores.
const INSERT = `
  INSERT INTO screens (job_id, status, score, started_at, completed_at)
  SELECT $1::uuid, s.status,
         CASE WHEN s.status = 'completed' AND (hashint8(g * 8 + 1) & 1023) < 920 THEN ((hashint8(g * 8 + 2) & 1023) % 1001) / 10.0 END,
         s.started, CASE WHEN s.status = 'completed' THEN s.started + interval '20 minutes' END
  FROM generate_series(1, $2::int) g
  CROSS JOIN LATERAL (SELECT (CASE WHEN (hashint8(g * 8) & 1023) < 614 THEN 'completed' WHEN (hashint8(g * 8) & 1023) < 870 THEN 'in_progress' ELSE 'expired' END)::screen_status AS status,
                             timestamptz '2024-11-01 00:00+00' + ((hashint8(g * 8 + 3) & 2147483647) % (730 * 86400)) * interval '1 second' AS started) s`

const EXACT = `
  SELECT NOT EXISTS (
    SELECT 1 FROM expected_job_screen_stats($1::uuid[]) e FULL JOIN stored_job_screen_stats($1::uuid[]) s USING (job_id)
    WHERE (e.in_progress, e.completed, e.expired, e.scored, e.score_sum) IS DISTINCT FROM (s.in_progress, s.completed, s.expired, s.scored, s.score_sum)
  ) AND NOT EXISTS (
    SELECT 1 FROM expected_job_completion_buckets($1::uuid[]) e FULL JOIN stored_job_completion_buckets($1::uuid[]) s USING (job_id, bucket)
    WHERE (e.completed, e.scored, e.score_sum) IS DISTINCT FROM (s.completed, s.scored, s.score_sum)
  ) AS exact`

export async function measureBulkLoad (ownerUrl: string, templateJobId: string, screens: number): Promise<BulkLoadResult> {
  const client = new pg.Client({ connectionString: ownerUrl })
  await client.connect()
  const timed = async (sql: string, values: unknown[] = []): Promise<number> => {
    const t0 = performance.now()
    await client.query(sql, values)
    return (performance.now() - t0) / 1000
  }
  try {
    const newJob = async (label: string): Promise<string> => (await client.query<{ id: string }>(`
      INSERT INTO jobs (organization_id, user_id, title, company_name, description, slug, share_token)
      SELECT organization_id, user_id, $2, company_name, description, $3, encode(sha256(convert_to($3, 'UTF8')), 'hex') FROM jobs WHERE id = $1
      RETURNING id`, [templateJobId, `Bulk load ${label}`, `bulk-load-${label}-${Date.now()}`])).rows[0]!.id
    const kept = await newJob('kept')
    const rebuilt = await newJob('rebuilt')

    const withSummariesInsert = await timed(INSERT, [kept, screens])
    const deltas = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM screen_summary_deltas WHERE job_id = $1', [kept])).rows[0]!.n)
    // Folded by whoever holds the fold's lock (the running service too): until none is left.
    const t0 = performance.now()
    for (;;) {
      await client.query('SELECT fold_screen_summary_deltas(20000)')
      const left = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM screen_summary_deltas WHERE job_id = $1', [kept])).rows[0]!.n)
      if (left === 0) break
      await new Promise(resolve => setTimeout(resolve, 20))
    }
    const withSummariesFold = (performance.now() - t0) / 1000

    await client.query('ALTER TABLE screens DISABLE TRIGGER USER')
    let withoutInsert: number
    try {
      withoutInsert = await timed(INSERT, [rebuilt, screens])
    } finally {
      await client.query('ALTER TABLE screens ENABLE TRIGGER USER')
    }
    const withoutRebuild = await timed('SELECT rebuild_screen_summaries(ARRAY[$1::uuid])', [rebuilt])
    const exact = (await client.query<{ exact: boolean }>(EXACT, [[kept, rebuilt]])).rows[0]!.exact
    return { screens, withSummariesInsert, withSummariesFold, withoutInsert, withoutRebuild, deltas, exact }
  } finally {
    await client.end()
  }
}

export function bulkLoadMarkdown (r: BulkLoadResult): string {
  const without = r.withoutInsert + r.withoutRebuild
  return [
    `| bulk load of ${r.screens.toLocaleString('en')} screens into one job (one INSERT … SELECT) | seconds |`,
    '|---|---:|',
    `| summaries kept: the INSERT (${r.deltas.toLocaleString('en')} deltas appended) | ${r.withSummariesInsert.toFixed(1)} |`,
    `| then every delta folded | ${r.withSummariesFold.toFixed(1)} |`,
    `| triggers off: the INSERT | ${r.withoutInsert.toFixed(1)} |`,
    `| then the job's summaries rebuilt | ${r.withoutRebuild.toFixed(1)} |`,
    `| ratio, INSERT kept ÷ (off + rebuild) | ${(r.withSummariesInsert / without).toFixed(2)} |`,
    `| ratio, INSERT and fold ÷ (off + rebuild) | ${((r.withSummariesInsert + r.withSummariesFold) / without).toFixed(2)} |`,
    `| both jobs' summaries equal their screens | ${r.exact ? 'yes' : '**no**'} |`,
  ].join('\n')
}
