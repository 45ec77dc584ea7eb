import { createHash } from 'node:crypto'
import t from 'tap'
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Locator, Page } from 'playwright-core'
import { SCOPES } from '../../src/auth/scopes.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/open-database.js'
import { demoId } from '../../src/demo/seed.js'
import { chromiumSkip, launchChromium } from '../helpers/browser.js'
import { startServer } from '../helpers/server-process.js'

// Swagger UI at /docs, driven in a real headless Chromium against the real server, as a newcomer
// uses it: Authorize with the printed key, Try it out, Execute, read the rendered response.
// Screenshots go to test-output/swagger-ui/ (git-ignored).

const SHOTS = fileURLToPath(new URL('../../test-output/swagger-ui/', import.meta.url))
/** The expanded get job, from its summary to its last documented response, at 1280 px wide (about 7,000 before issue 58). */
const GET_JOB_MAX_PX = 2_500

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
  // Typing 50 ids re-renders the operation at each one: 65 s of the run on a slow 2-core machine.
  timeout: 240_000,
}, async t => {
  mkdirSync(SHOTS, { recursive: true })
  const browser = await launchChromium(t)
  const dataDir = mkdtempSync(join(tmpdir(), 'screening-swagger-'))
  const server = await startServer(t, {}, { dataDir })
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } })
  page.setDefaultTimeout(20_000)
  const pageErrors: string[] = []
  page.on('pageerror', e => pageErrors.push(e.message))

  await page.goto(server.docsUrl)
  await page.locator('#operations-Jobs-getJob').waitFor()
  const authButton = page.locator('.auth-wrapper .btn.authorize')
  const authState = async (): Promise<string[]> => (await authButton.getAttribute('class') ?? '').split(/\s+/)
  t.ok((await authState()).includes('unlocked'), 'a first visit is not authorized')

  await t.test('the first screen is written for a partner', async t => {
    await page.screenshot({ path: join(SHOTS, 'first-screen.png') })
    const intro = await page.locator('.information-container .info .description').innerText()
    for (const family of ['Jobs', 'Sync', 'Analytics', 'Webhook endpoints', 'Webhooks', 'GET /api/me']) t.match(intro, family, `the intro names ${family}`)
    for (const scope of SCOPES) t.match(intro, scope, `the intro lists the scope ${scope}`)
    t.match(intro, /Ask your organization's admin for an API key/, 'a key comes from the organization\'s admin')
    t.notMatch(intro, /npm run|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/, 'no operator\'s command, no environment variable')
  })

  await t.test('one heading per family: the endpoints\' tag and the Webhooks section apart', async t => {
    const tags = (await page.locator('.opblock-tag-section .opblock-tag').allInnerTexts()).map(text => text.split('\n')[0]!.trim())
    t.same(tags, ['Jobs', 'Analytics', 'Account', 'Webhook endpoints'])
    const headings = [...tags, ...(await page.locator('.swagger-ui h2, .swagger-ui h3, .swagger-ui h4').allInnerTexts()).map(text => text.split('\n')[0]!.trim())]
    t.equal(headings.filter(text => text === 'Webhooks').length, 1, 'one "Webhooks" heading: the events\' section')
  })

  await t.test('servers: the relative entry, which Try it out sends to this origin', async t => {
    t.same(await page.locator('.servers select option').allInnerTexts(), ['/ - The origin this document is served from (local or production)'])
  })

  await t.test('get job expanded stays readable: error responses one line each', async t => {
    const op = page.locator('#operations-Jobs-getJob')
    await op.locator('.opblock-summary-control').click()
    await op.locator('table.responses-table tr.response[data-code="404"]').waitFor()
    const height = (await op.boundingBox())!.height
    t.ok(height < GET_JOB_MAX_PX, `expanded get job: ${Math.round(height)} px (bound ${GET_JOB_MAX_PX})`)
    t.comment(`swagger ui figures: expanded get job ${Math.round(height)} px tall`)
    const notFound = op.locator('table.responses-table tr.response[data-code="404"]')
    t.equal(await notFound.locator('.headers-wrapper').count(), 0, 'a 404 collapsed: no headers shown')
    await notFound.getByRole('button', { name: 'Example and headers' }).click()
    await notFound.locator('.headers-wrapper').waitFor()
    t.match(await notFound.innerText(), '"code": "not_found"', 'its button shows its example')
    await op.locator('.opblock-summary-control').click()
  })

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
    t.match(r.curl, `${server.baseUrl}/api/jobs/${server.sampleJobId}`, 'the servers entry `/`: sent to this origin, one slash')
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

  await t.test('a dashboard of 50 jobs in one request, typed into Swagger UI', async t => {
    // The demo organization's 6 jobs and 44 more, written as the recruiters' app would (through
    // the running server's database door), each with a few completed screens.
    const ids = await moreDemoJobs(dataDir, 44)
    t.equal(ids.length, 50)
    const op = page.locator('#operations-Analytics-getJobsAnalytics')
    const items = op.locator('tr[data-param-name="job_id"] .json-schema-form-item input')
    while (await items.count() < ids.length) await op.locator('tr[data-param-name="job_id"] .json-schema-form-item-add').click()
    for (const [i, id] of ids.entries()) await items.nth(i).fill(id)
    const batch = await execute(page, 'Analytics', 'getJobsAnalytics')
    await shoot(batch, 'jobs-analytics-50.png')
    t.equal(batch.status, '200', 'the live response shows 200')
    t.equal(batch.curl.match(/job_id=/g)?.length, 50, 'one request, the 50 ids a repeated parameter')
    const body = JSON.parse(batch.body) as { jobs: Array<{ job_id: string, analytics?: { total_interviews: number } }> }
    t.same(body.jobs.map(entry => entry.job_id), ids, 'an entry for each, in the order typed')
    t.ok(body.jobs.every(entry => entry.analytics !== undefined), 'every one of them the caller\'s: its analytics')
    t.comment(`swagger ui figures: 50 jobs in one request, ${body.jobs.reduce((sum, entry) => sum + entry.analytics!.total_interviews, 0)} screens, a body of ${batch.body.length} characters as rendered`)
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

/** The demo Pro organization's job ids and `count` new ones (3 completed screens each), made through the server's database door. */
async function moreDemoJobs (dataDir: string, count: number): Promise<string[]> {
  const db = await openDatabase(loadConfig({ DATA_DIR: dataDir }), { beside: 'door' })
  try {
    const organizationId = demoId('org:acme')
    const userId = demoId('user:acme')
    for (let i = 0; i < count; i++) {
      const job = await db.prisma.job.create({ data: { organizationId, userId, title: `Dashboard job ${i + 1}`, companyName: 'Acme Corp', description: 'A job of the dashboard test.', slug: `dashboard-job-${i + 1}`, shareToken: createHash('sha256').update(`dashboard-${i}`).digest('hex') } })
      await db.prisma.screen.createMany({ data: [70, 85, null].map((score, n) => ({ jobId: job.id, status: 'completed' as const, score, startedAt: new Date(Date.UTC(2026, 0, 5 + n)), completedAt: new Date(Date.UTC(2026, 0, 5 + n, 1)) })) })
    }
    const jobs = await db.prisma.job.findMany({ where: { organizationId }, select: { id: true }, orderBy: { createdAt: 'asc' } })
    return jobs.map(job => job.id)
  } finally {
    await db.close()
  }
}
