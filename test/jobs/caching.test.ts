import t from 'tap'
import { ifNoneMatchMatches } from '../../src/plugins/caching.js'
import { buildTestApp } from '../helpers/app.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'

const { app, prisma } = await buildTestApp(t)
const acme = await createTenant(prisma)
const globex = await createTenant(prisma)
const job = await createJob(prisma, acme, { questions: 2 })
await createJob(prisma, globex)
const get = (headers: Record<string, string> = {}) => app.inject({ url: `/api/jobs/${job.id}`, headers: { ...acme.auth, ...headers } })

t.test('200 carries an ETag and Cache-Control: private, no-cache', async t => {
  const res = await get()
  t.equal(res.statusCode, 200)
  t.match(res.headers.etag, /^"[A-Za-z0-9_-]{27}"$/)
  t.equal(res.headers['cache-control'], 'private, no-cache')
  t.equal((await get()).headers.etag, res.headers.etag, 'stable while nothing changes')
})

t.test('a matching If-None-Match gets 304 with no body; a stale one gets the 200', async t => {
  const { etag } = (await get()).headers as { etag: string }
  for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const res = await get({ 'if-none-match': header })
    t.equal(res.statusCode, 304, header)
    t.equal(res.body, '', 'no body')
    t.equal(res.headers.etag, etag)
    t.equal(res.headers['cache-control'], 'private, no-cache')
  }
  const stale = await get({ 'if-none-match': '"stale"' })
  t.equal(stale.statusCode, 200)
})

t.test('the ETag changes when any field of the body changes', async t => {
  const etags = new Set<string>()
  const etag = async () => { const e = (await get()).headers.etag as string; etags.add(e); return e }
  const before = await etag()
  await createScreens(prisma, job.id, [{ status: 'in_progress' }])
  const afterScreen = await etag()
  t.not(afterScreen, before, 'a new screen')
  await createScreens(prisma, job.id, [{ status: 'completed', score: 40, completedAt: new Date() }])
  const afterScore = await etag()
  t.not(afterScore, afterScreen, 'a new score')
  await prisma.screen.updateMany({ where: { jobId: job.id, status: 'completed' }, data: { score: 41 } })
  t.not(await etag(), afterScore, 'a changed score')
  await prisma.job.update({ where: { id: job.id }, data: { title: 'Renamed' } })
  await etag()
  t.equal(etags.size, 5, 'a rename too')
  const old = [...etags][0]!
  t.equal((await get({ 'if-none-match': old })).statusCode, 200, 'an old ETag no longer matches')
})

t.test('errors carry no ETag and are never 304', async t => {
  const missing = await app.inject({ url: '/api/jobs/00000000-0000-0000-0000-000000000000', headers: { ...acme.auth, 'if-none-match': '*' } })
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers.etag, undefined)
  t.equal(missing.headers['cache-control'], undefined)
})

t.test('If-None-Match parsing', async t => {
  t.ok(ifNoneMatchMatches('"a"', '"a"'))
  t.ok(ifNoneMatchMatches('W/"a"', '"a"'))
  t.ok(ifNoneMatchMatches(' "b" ,  "a" ', '"a"'))
  t.notOk(ifNoneMatchMatches('"ab"', '"a"'))
  t.notOk(ifNoneMatchMatches('', '"a"'))
})

t.test('a 304 has no Content-Type and no Content-Length (RFC 9110 §15.4.5), on GET and HEAD, for every conditional operation', async t => {
  const analyticsJob = await createJob(prisma, acme)
  // The list filtered by status: a walk of every job ends with a sync token, whose snapshot
  // moves with every transaction on the server (other test files' too), and its body's ETag with it.
  for (const url of [`/api/jobs/${job.id}`, '/api/jobs?status=active', '/api/me', `/api/jobs/${analyticsJob.id}/analytics`]) {
    const auth = acme.auth // on the Pro plan (the fixtures' default): analytics included
    const { etag } = (await app.inject({ url, headers: auth })).headers as { etag: string }
    t.ok(etag, `${url}: an ETag`)
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await app.inject({ method, url, headers: { ...auth, 'if-none-match': etag } })
      t.equal(res.statusCode, 304, `${method} ${url}`)
      t.equal(res.headers['content-type'], undefined, 'no content-type')
      t.equal(res.headers['content-length'], undefined, 'no content-length')
      t.equal(res.headers.etag, etag, 'the ETag')
      t.equal(res.body, '')
    }
  }
})
