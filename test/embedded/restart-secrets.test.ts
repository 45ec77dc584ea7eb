import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startServer, type RunningServer } from '../helpers/server-process.js'

// Issue 55, finding 11: on the embedded default, sync tokens and list cursors were signed with
// a secret random per process, so every restart (and every save under `npm run dev`) turned a
// partner's token into a 400. They must survive a restart on the same DATA_DIR.

interface Page { next_cursor: string | null, sync_token?: string | null }

t.test('a sync token and list cursors made before a restart of `npm start` work after it', async t => {
  const dataDir = mkdtempSync(join(tmpdir(), 'screening-restart-'))
  // A loopback receiver may be registered (nothing is sent to it: no job changes).
  const env = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' }
  const first = await startServer(t, env, { dataDir })
  const auth = { authorization: `Bearer ${first.keys.pro}` }
  const get = async (server: RunningServer, path: string): Promise<Response> => await fetch(`${server.baseUrl}${path}`, { headers: auth })

  // A walk: its first page's cursor, and the sync token of its last page.
  const firstPage = await (await get(first, '/api/jobs?limit=1')).json() as Page
  t.type(firstPage.next_cursor, 'string', 'the demo organization has more than one job')
  let page: Page = firstPage
  let cursor: string | null = null
  do {
    page = await (await get(first, `/api/jobs?limit=100${cursor !== null ? `&cursor=${cursor}` : ''}`)).json() as Page
    cursor = page.next_cursor
  } while (cursor !== null)
  const token = page.sync_token
  t.type(token, 'string', 'the last page carries a sync token')

  // A cursor of the webhook endpoints' list (the other routes that sign with the secret).
  for (const port of [9, 10]) {
    const made = await fetch(`${first.baseUrl}/api/webhook_endpoints`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook` }) })
    t.equal(made.status, 201, 'an endpoint is made', { body: await made.text() })
  }
  const endpoints = await (await get(first, '/api/webhook_endpoints?limit=1')).json() as Page
  t.type(endpoints.next_cursor, 'string', 'the endpoints\' list has a next page')

  t.equal(await first.stop(), 0, 'the first run stops cleanly')
  const second = await startServer(t, env, { dataDir })
  const resumed = await get(second, `/api/jobs?limit=1&cursor=${firstPage.next_cursor}`)
  t.equal(resumed.status, 200, 'the list cursor after the restart', { body: await resumed.text() })
  const synced = await get(second, `/api/jobs?changed_since=${token}`)
  t.equal(synced.status, 200, 'the sync token after the restart', { body: await synced.text() })
  const next = await get(second, `/api/webhook_endpoints?limit=1&cursor=${endpoints.next_cursor}`)
  t.equal(next.status, 200, 'the endpoints\' list cursor after the restart', { body: await next.text() })
})
