import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { contractProblems } from '../helpers/contract.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'

const { app, prisma } = await buildTestApp(t)
const acme = await createTenant(prisma)
const globex = await createTenant(prisma)
const list = (query: string, headers: Record<string, string> = acme.auth) => app.inject({ url: `/api/jobs${query}`, headers })

// 25 jobs, several sharing a creation time, to test ordering ties; and the other
// organization's jobs interleaved in time.
const same = new Date('2026-03-01T12:00:00.000Z')
const mine: Array<Awaited<ReturnType<typeof createJob>>> = []
for (let i = 0; i < 25; i++) {
  const createdAt = i % 5 === 0 ? same : new Date(Date.UTC(2026, 0, 1 + i))
  mine.push(await createJob(prisma, acme, { title: `Acme ${i}`, status: i % 3 === 0 ? 'closed' : 'active', createdAt, questions: i % 4 }))
  await createJob(prisma, globex, { title: `Globex ${i}`, createdAt })
}
await createScreens(prisma, mine[1]!.id, [{ status: 'completed', score: 70, completedAt: new Date() }, { status: 'expired' }])
const expected = [...mine].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map(j => j.id)

async function walk (query: string, headers = acme.auth): Promise<{ ids: string[], pages: number }> {
  const ids: string[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const res = await list(`${query}${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, headers)
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    const body = res.json() as { data: Array<{ id: string }>, next_cursor: string | null }
    ids.push(...body.data.map(j => j.id))
    cursor = body.next_cursor
    pages++
  } while (cursor !== null && pages < 100)
  return { ids, pages }
}

t.test('every page returns exactly the caller\'s jobs, each once, newest first, ties by id', async t => {
  for (const limit of [1, 4, 7, 20, 25, 100]) {
    const { ids, pages } = await walk(`?limit=${limit}`)
    t.same(ids, expected, `limit ${limit}`)
    t.equal(pages, Math.max(1, Math.ceil(25 / limit)), `limit ${limit}: pages`)
  }
})

t.test('default limit is 20; the last page has next_cursor null', async t => {
  const first = (await list('')).json()
  t.equal(first.data.length, 20)
  t.type(first.next_cursor, 'string')
  const last = (await list(`?cursor=${encodeURIComponent(first.next_cursor)}`)).json()
  t.equal(last.data.length, 5)
  t.equal(last.next_cursor, null)
})

t.test('list items are full Job objects with their counts', async t => {
  const { data } = (await list('?limit=100')).json() as { data: Array<Record<string, unknown>> }
  const one = data.find(j => j.id === mine[1]!.id)
  t.match(one, { title: 'Acme 1', question_count: 1, interview_count: 2, average_score: 70 })
  const single = (await app.inject({ url: `/api/jobs/${mine[1]!.id}`, headers: acme.auth })).json()
  t.same(one, single, 'the same object as get-job')
})

t.test('status filter', async t => {
  const { ids } = await walk('?limit=3&status=closed')
  t.same(ids, expected.filter(id => mine.find(j => j.id === id)!.status === 'closed'))
})

t.test('a tampered, foreign or mismatched cursor is a 400, never rows', async t => {
  const first = (await list('?limit=2')).json()
  const cursor: string = first.next_cursor
  const [body, sig] = cursor.split('.') as [string, string]
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString())
  const forged = Buffer.from(JSON.stringify({ ...payload, o: globex.organizationId })).toString('base64url')
  const cases: Record<string, [string, Record<string, string>]> = {
    'another organization uses it': [`?limit=2&cursor=${encodeURIComponent(cursor)}`, globex.auth],
    'payload edited, signature kept': [`?limit=2&cursor=${forged}.${sig}`, acme.auth],
    // Its first character: every bit of it counts (a last character's low bits are padding, so an edit there may decode to the same bytes).
    'signature edited': [`?limit=2&cursor=${body}.${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`, acme.auth],
    'another status filter': [`?limit=2&status=closed&cursor=${encodeURIComponent(cursor)}`, acme.auth],
    garbage: ['?cursor=%F0%9F%92%A9', acme.auth],
    'too long': [`?cursor=${'a'.repeat(600)}`, acme.auth],
  }
  for (const [name, [query, headers]] of Object.entries(cases)) {
    const res = await list(query, headers)
    t.equal(res.statusCode, 400, name)
    t.equal(res.json().code, 'invalid_request', name)
    t.notOk('data' in res.json(), `${name}: no rows`)
  }
})

t.test('bad limits and filters are 400s naming the parameter', async t => {
  for (const [query, path] of [['?limit=0', 'querystring/limit'], ['?limit=101', 'querystring/limit'], ['?limit=2.5', 'querystring/limit'], ['?limit=1e309', 'querystring/limit'], ['?limit=-1e309', 'querystring/limit'], ['?status=archived', 'querystring/status']] as const) {
    const res = await list(query)
    t.equal(res.statusCode, 400, query)
    t.equal(res.json().details[0].path, path)
  }
})

t.test('the other organization sees only its own', async t => {
  const { ids } = await walk('?limit=10', globex.auth)
  t.equal(ids.length, 25)
  t.notOk(ids.some(id => expected.includes(id)))
})

t.test('a dot segment is resolved as clients resolve it: /api/jobs/. is the list (found by the fuzz, seed 253455729)', async t => {
  const res = await app.inject({ url: '/api/jobs/.', headers: acme.auth })
  t.equal(res.statusCode, 200)
  t.equal((res.json() as { data: unknown[] }).data.length, 20, 'a page of the list, checked against listJobs by the validating inject')
  const asJob = { ...res, method: 'GET', url: '/api/jobs/.', body: JSON.stringify({ id: 'x' }) }
  t.not(contractProblems(asJob).length, 0, 'the contract check still refuses a body that is not the list\'s')
})
