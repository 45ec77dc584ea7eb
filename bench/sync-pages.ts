// What a sync page costs (issue 35): a page of 10 from a sync token made before many jobs
// changed (50,000; 5,000 in a quick run), against a list page of 10 of the same organization,
// both on the service (the baseline has no sync). A page must cost what it holds, not what
// changed since the token: its mean latency within SYNC_FACTOR of the list page's.
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { generateApiKey } from '../src/auth/api-keys.js'
import { median } from './report.js'
import type { Runs } from './rounds.js'
import type { Scenario } from './scenarios.js'

export const SYNC_FACTOR = 3

export interface SyncSetup { organizationId: string, apiKey: string, token: string, changed: number }

/**
 * An organization of its own (a Pro one, with a key), walked through the service while it
 * has no job, for a token; then `changed` jobs created after it, in transactions of 1,000.
 */
export async function prepareSyncScenario (ownerUrl: string, serviceUrl: string, changed: number): Promise<SyncSetup> {
  const client = new pg.Client({ connectionString: ownerUrl })
  await client.connect()
  try {
    const org = randomUUID()
    const user = randomUUID()
    await client.query('INSERT INTO organizations (id, name, plan, subscription_status) VALUES ($1, \'Bench Sync Org\', \'pro\', \'active\')', [org])
    await client.query('INSERT INTO users (id, organization_id, email, name) VALUES ($1, $2, $3, \'Sync\')', [user, org, `sync-${user}@bench.example`])
    const key = generateApiKey()
    await client.query('INSERT INTO api_keys (user_id, name, prefix, hash) VALUES ($1, $2, $3, $4)', [user, 'bench sync', key.prefix, Buffer.from(key.hash)])
    const walked = await fetch(`${serviceUrl}/api/jobs?limit=100`, { headers: { authorization: `Bearer ${key.key}` } })
    const body = await walked.json() as { sync_token?: string | null }
    if (walked.status !== 200 || typeof body.sync_token !== 'string') throw new Error(`the walk of the sync organization answered ${walked.status}: ${JSON.stringify(body)}`)
    for (let done = 0; done < changed; done += 1000) {
      await client.query(`
        INSERT INTO jobs (organization_id, user_id, title, company_name, description, slug, share_token, created_at, updated_at)
        SELECT $1, $2, 'Sync job ' || n, 'Bench', 'A job created after the token.', 'sync-' || gen_random_uuid(), md5(n::text || random()) || md5(random()::text),
               now() - n * interval '1 minute', now()
        FROM generate_series($3::int, $4::int) n`, [org, user, done + 1, Math.min(done + 1000, changed)])
    }
    await client.query('VACUUM ANALYZE jobs, job_changes')
    return { organizationId: org, apiKey: key.key, token: body.sync_token, changed }
  } finally {
    await client.end()
  }
}

/**
 * The organization and its jobs deleted again, before the stages that read every job (the
 * drift check, the writes at random jobs), whose figures compare with earlier runs'.
 */
export async function removeSyncScenario (ownerUrl: string, setup: SyncSetup): Promise<void> {
  const client = new pg.Client({ connectionString: ownerUrl })
  await client.connect()
  try {
    await client.query('DELETE FROM organizations WHERE id = $1', [setup.organizationId])
    await client.query('VACUUM ANALYZE jobs, job_changes')
  } finally {
    await client.end()
  }
}

const SYNC_NAME = 'sync page (10), many changed'
const LIST_NAME = 'list page (10), same organization'

/** The two scenarios, on the service only. */
export function syncScenarios (setup: SyncSetup): Scenario[] {
  const auth = { authorization: `Bearer ${setup.apiKey}` }
  const only = (path: string): Scenario['requests'] => ({ service: [{ path, headers: auth }], baseline: [] })
  return [
    { name: SYNC_NAME, target: undefined, requests: only(`/api/jobs?limit=10&changed_since=${encodeURIComponent(setup.token)}`) },
    { name: LIST_NAME, target: undefined, requests: only('/api/jobs?limit=10') },
  ]
}

export interface SyncRow { changed: number, sync: { mean: number, requestsPerSecond: number }, list: { mean: number, requestsPerSecond: number }, ratio: number, met: boolean }

/** Sync page ÷ list page (mean latency, medians over rounds); none when either was not measured. */
export function syncRows (runs: Runs, setup: SyncSetup | undefined): SyncRow[] {
  const of = (name: string): { mean: number, requestsPerSecond: number } | undefined => {
    const ms = runs.scenarios.find(s => s.scenario.name === name)?.runs.service
    return ms === undefined || ms.length === 0 ? undefined : { mean: median(ms.map(m => m.mean)), requestsPerSecond: median(ms.map(m => m.requestsPerSecond)) }
  }
  const [sync, list] = [of(SYNC_NAME), of(LIST_NAME)]
  if (setup === undefined || sync === undefined || list === undefined) return []
  const ratio = sync.mean / list.mean
  return [{ changed: setup.changed, sync, list, ratio, met: ratio <= SYNC_FACTOR }]
}

export function syncMarkdownTable (rows: SyncRow[]): string {
  return [
    `| sync page (10) ÷ list page (10), service | jobs changed since the token | sync mean ms | list mean ms | sync req/s | list req/s | ratio (mean) | within ${SYNC_FACTOR}×? |`,
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map(r => `| first page of the sync | ${r.changed.toLocaleString('en-US')} | ${r.sync.mean.toFixed(2)} | ${r.list.mean.toFixed(2)} | ${r.sync.requestsPerSecond.toFixed(0)} | ${r.list.requestsPerSecond.toFixed(0)} | ${r.ratio.toFixed(2)}× | ${r.met ? 'yes' : 'NO'} |`),
  ].join('\n')
}
