import { randomBytes, randomUUID } from 'node:crypto'
import fc from 'fast-check'
import t from 'tap'
import type { JobStatus, ScreenStatus } from '../../src/generated/prisma/enums.js'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, type Tenant } from '../helpers/fixtures.js'
import { checkProperty, closeEnough, storableScore } from '../helpers/property.js'

// Random organizations, jobs, questions and screens; every job fetched through the API must
// equal a computation in plain TypeScript over the generated data, the other organization's
// jobs must be indistinguishable from missing ones, and listing must return exactly the
// caller's jobs, each once, in order.

const { app, prisma } = await buildTestApp(t)

const screenArb = fc.record({
  status: fc.constantFrom<ScreenStatus>('completed', 'in_progress', 'expired'),
  score: fc.option(storableScore, { nil: null }),
  completedAt: fc.date({ min: new Date('2024-01-01T00:00:00Z'), max: new Date('2026-12-31T00:00:00Z'), noInvalidDate: true }),
})
const jobArb = fc.record({
  status: fc.constantFrom<JobStatus>('draft', 'active', 'paused', 'closed'),
  // Few distinct creation times, so that ties in the ordering are common.
  createdAt: fc.integer({ min: 0, max: 5 }).map(d => new Date(Date.UTC(2026, 0, 1 + d))),
  questions: fc.integer({ min: 0, max: 4 }),
  branding: fc.option(fc.record({ logoUrl: fc.webUrl(), brandColor: fc.stringMatching(/^#[0-9a-f]{6}$/) }), { nil: null }),
  showServiceBranding: fc.boolean(),
  euCandidatesAllowed: fc.boolean(),
  screens: fc.array(screenArb, { maxLength: 8 }),
})
const worldArb = fc.record({
  mine: fc.array(jobArb, { maxLength: 4 }),
  theirs: fc.array(jobArb, { minLength: 1, maxLength: 3 }),
  pageSize: fc.integer({ min: 1, max: 5 }),
})
type GenJob = typeof jobArb extends fc.Arbitrary<infer J> ? J : never

async function insert (tenant: Tenant, jobs: GenJob[]): Promise<Array<GenJob & { id: string, slug: string, shareToken: string }>> {
  const rows = jobs.map(j => ({ ...j, id: randomUUID(), slug: `p-${randomBytes(8).toString('hex')}`, shareToken: randomBytes(32).toString('hex') }))
  await prisma.job.createMany({
    data: rows.map(j => ({
      id: j.id,
      organizationId: tenant.organizationId,
      userId: tenant.userId,
      title: `Job ${j.id.slice(0, 4)}`,
      companyName: 'C',
      description: 'D',
      status: j.status,
      slug: j.slug,
      shareToken: j.shareToken,
      logoUrl: j.branding?.logoUrl ?? null,
      brandColor: j.branding?.brandColor ?? null,
      showServiceBranding: j.showServiceBranding,
      euCandidatesAllowed: j.euCandidatesAllowed,
      createdAt: j.createdAt,
      updatedAt: j.createdAt,
    })),
  })
  await prisma.question.createMany({ data: rows.flatMap(j => Array.from({ length: j.questions }, (_, i) => ({ jobId: j.id, position: i + 1, text: 'q' }))) })
  await prisma.screen.createMany({
    data: rows.flatMap(j => j.screens.map(s => ({
      jobId: j.id,
      status: s.status,
      score: s.score,
      startedAt: new Date(s.completedAt.getTime() - 3_600_000),
      completedAt: s.status === 'completed' ? s.completedAt : null,
    }))),
  })
  return rows
}

/** The reference: the Job object computed in plain TypeScript. */
function expectedJob (tenant: Tenant, j: GenJob & { id: string, slug: string, shareToken: string }) {
  const scores = j.screens.filter(s => s.status === 'completed' && s.score !== null).map(s => s.score as number)
  return {
    id: j.id,
    user_id: tenant.userId,
    title: `Job ${j.id.slice(0, 4)}`,
    company_name: 'C',
    description: 'D',
    status: j.status,
    slug: j.slug,
    share_token: j.shareToken,
    logo_url: j.branding?.logoUrl ?? null,
    brand_color: j.branding?.brandColor ?? null,
    show_service_branding: j.showServiceBranding,
    eu_candidates_allowed: j.euCandidatesAllowed,
    question_count: j.questions,
    interview_count: j.screens.length,
    average_score: scores.length === 0 ? null : scores.reduce((a, b) => a + b, 0) / scores.length,
    created_at: j.createdAt.toISOString(),
    updated_at: j.createdAt.toISOString(),
  }
}

t.test('get-job and list-jobs agree with a plain computation over random data', async t => {
  await checkProperty(t, 'job read', worldArb, async world => {
    const me = await createTenant(prisma)
    const them = await createTenant(prisma, { plan: 'free' })
    const mine = await insert(me, world.mine)
    const theirs = await insert(them, world.theirs)

    for (const j of mine) {
      const res = await app.inject({ url: `/api/jobs/${j.id}`, headers: me.auth })
      if (res.statusCode !== 200) throw new Error(`GET own job: ${res.statusCode} ${res.body}`)
      const { average_score: got, ...rest } = res.json()
      const { average_score: want, ...wantRest } = expectedJob(me, j)
      t.same(rest, wantRest)
      if (!closeEnough(got, want)) throw new Error(`average_score ${got} != ${want}`)
    }
    const missing = await app.inject({ url: `/api/jobs/${randomUUID()}`, headers: me.auth })
    const strip = (body: string) => body.replace(/"request_id":"[^"]+"/, '')
    for (const j of theirs) {
      const res = await app.inject({ url: `/api/jobs/${j.id}`, headers: me.auth })
      if (res.statusCode !== 404 || strip(res.body) !== strip(missing.body)) throw new Error(`foreign job: ${res.statusCode} ${res.body}`)
    }

    const order = [...mine].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map(j => j.id)
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res = await app.inject({ url: `/api/jobs?limit=${world.pageSize}${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, headers: me.auth })
      if (res.statusCode !== 200) throw new Error(`list: ${res.statusCode} ${res.body}`)
      const body = res.json() as { data: Array<{ id: string }>, next_cursor: string | null }
      seen.push(...body.data.map(d => d.id))
      cursor = body.next_cursor
    } while (cursor !== null && ++pages < 50)
    t.same(seen, order, 'list: exactly my jobs, each once, in order')
  })
})
