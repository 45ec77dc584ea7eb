import t from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Locator, Page } from 'playwright-core'
import { chromiumSkip, launchChromium } from '../helpers/browser.js'
import { startServer } from '../helpers/server-process.js'

// Swagger UI at /docs, driven in a real headless Chromium against the real server, as a newcomer
// uses it: Authorize with the printed key, Try it out, Execute, read the rendered response.
// Screenshots go to test-output/swagger-ui/ (git-ignored).

const SHOTS = fileURLToPath(new URL('../../test-output/swagger-ui/', import.meta.url))

/** Opens the Authorize dialog, logs out if a key is set, applies `key` and closes the dialog. */
async function authorize (page: Page, key: string): Promise<void> {
  await page.locator('.auth-wrapper .btn.authorize').click()
  const modal = page.locator('.modal-ux')
  await modal.waitFor()
  const logout = modal.getByRole('button', { name: 'Remove authorization' })
  if (await logout.count() > 0) await logout.click()
  await modal.locator('#auth-bearer-value').fill(key)
  await modal.getByRole('button', { name: 'Apply credentials' }).click()
  await modal.locator('h6', { hasText: 'Authorized' }).waitFor()
  await modal.locator('.btn-done').click()
  await modal.waitFor({ state: 'detached' })
}

interface Rendered { op: Locator, status: string, body: string, curl: string }

/** Expands the operation, fills `jobId` (when given; else the examples stay), clicks Execute and reads the rendered server response. */
async function execute (page: Page, tag: string, operationId: string, jobId?: string): Promise<Rendered> {
  const op = page.locator(`#operations-${tag}-${operationId}`)
  const summary = op.locator('.opblock-summary-control')
  // deepLinking re-expands the last opened operation after a reload: a click would collapse it.
  if (await summary.getAttribute('aria-expanded') !== 'true') await summary.click()
  const tryOut = op.locator('.try-out__btn')
  await tryOut.waitFor()
  // tryItOutEnabled: the button already reads "Cancel".
  if ((await tryOut.getAttribute('class'))?.split(/\s+/).includes('cancel') !== true) await tryOut.click()
  const clear = op.locator('.btn-clear')
  if (await clear.count() > 0) await clear.click()
  await op.locator('.live-responses-table').waitFor({ state: 'detached' })
  if (jobId !== undefined) await op.locator('tr[data-param-name="jobId"][data-param-in="path"] input[placeholder="jobId"]').fill(jobId)
  await op.locator('.btn.execute').click()
  const row = op.locator('.live-responses-table tbody tr.response').first()
  await row.waitFor()
  await row.locator('.highlight-code pre').waitFor()
  return {
    op,
    status: (await row.locator('.response-col_status').innerText()).trim(),
    body: await row.locator('.highlight-code pre').innerText(),
    curl: await op.locator('.curl-command pre').innerText(),
  }
}

/** The operation from its summary down to the live response (the documented responses hidden). */
async function shoot (rendered: Rendered, name: string): Promise<void> {
  await rendered.op.screenshot({ path: join(SHOTS, name), style: 'table.responses-table:not(.live-responses-table) { display: none !important }' })
}

t.test('Swagger UI: authorize, try getJob and getJobAnalytics, persist, switch to the Free key', {
  skip: chromiumSkip('Swagger UI browser test'),
  timeout: 120_000,
}, async t => {
  mkdirSync(SHOTS, { recursive: true })
  const browser = await launchChromium(t)
  const server = await startServer(t)
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } })
  page.setDefaultTimeout(20_000)
  const pageErrors: string[] = []
  page.on('pageerror', e => pageErrors.push(e.message))

  await page.goto(server.docsUrl)
  await page.locator('#operations-Jobs-getJob').waitFor()
  const authButton = page.locator('.auth-wrapper .btn.authorize')
  const authState = async (): Promise<string[]> => (await authButton.getAttribute('class') ?? '').split(/\s+/)
  t.ok((await authState()).includes('unlocked'), 'a first visit is not authorized')

  await t.test('authorize with the Pro key', async t => {
    await authorize(page, server.keys.pro)
    t.ok((await authState()).includes('locked'), 'the Authorize button shows the locked state')
  })

  await t.test('Try it out: getJob renders the job', async t => {
    const r = await execute(page, 'Jobs', 'getJob', server.sampleJobId)
    await shoot(r, 'get-job-200.png')
    t.equal(r.status, '200', 'the live response shows 200')
    t.match(r.body, '"title": "Senior Backend Engineer"')
    t.match(r.body, `"id": "${server.sampleJobId}"`)
    t.match(r.curl, `Authorization: Bearer ${server.keys.pro}`, 'the request carried the Pro key')
  })

  await t.test('Try it out: getJobAnalytics renders the analytics', async t => {
    const r = await execute(page, 'Analytics', 'getJobAnalytics', server.sampleJobId)
    await shoot(r, 'analytics-200.png')
    t.equal(r.status, '200', 'the live response shows 200')
    t.match(r.body, '"completion_rate"')
  })

  await t.test('Try it out: the dashboard operations with their prefilled examples', async t => {
    const batch = await execute(page, 'Analytics', 'getJobsAnalytics')
    await shoot(batch, 'jobs-analytics-200.png')
    t.equal(batch.status, '200', 'many jobs: the live response shows 200')
    t.match(batch.body, `"job_id": "${server.sampleJobId}"`)
    t.match(batch.body, '"code": "not_found"', 'the example\'s second id is no job: its entry says so')
    const rollup = await execute(page, 'Analytics', 'getOrganizationAnalytics')
    await shoot(rollup, 'organization-analytics-200.png')
    t.equal(rollup.status, '200', 'the organization: the live response shows 200')
    t.match(rollup.body, /"job_count": [1-9]/)
    t.match(rollup.curl, 'job_status=active&job_status=paused', 'the example\'s states sent as a repeated parameter')
  })

  await t.test('the authorization survives a reload (persistAuthorization)', async t => {
    await page.reload()
    await page.locator('#operations-Jobs-getJob').waitFor()
    t.ok((await authState()).includes('locked'), 'still locked after the reload')
    // The top of the page down to the Authorize button (locked); deepLinking may have scrolled away from it.
    await page.evaluate('window.scrollTo(0, 0)')
    await page.screenshot({ path: join(SHOTS, 'after-reload.png') })
    const r = await execute(page, 'Analytics', 'getJobAnalytics', server.sampleJobId)
    t.equal(r.status, '200', 'executing works without authorizing again')
    t.match(r.curl, `Authorization: Bearer ${server.keys.pro}`)
  })

  await t.test('re-authorized with the Free key, analytics renders the 403', async t => {
    await authorize(page, server.keys.free)
    const r = await execute(page, 'Analytics', 'getJobAnalytics', server.sampleJobId)
    await shoot(r, 'analytics-403-free.png')
    t.equal(r.status, '403', 'the live response shows 403')
    t.match(r.body, 'Pro subscription required')
    t.match(r.body, '"upgrade_url"')
    t.match(r.curl, `Authorization: Bearer ${server.keys.free}`, 'the request carried the Free key')
  })

  t.same(pageErrors, [], 'no uncaught errors in the page')
})
