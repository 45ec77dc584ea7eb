import { createHash } from 'node:crypto'
import { apiKeyPrefix, demoApiKey } from '../auth/api-keys.js'
import type { Scope } from '../auth/scopes.js'
import type { Prisma as Db } from '../db/database.js'
import type { JobStatus, Plan, ScreenStatus } from '../generated/prisma/enums.js'

// Deterministic demo data: the same ids, keys, dates and scores on every run, so the README,
// the docs and a newcomer's terminal agree. Running it again resets the demo organizations.

/** A stable UUID (version 5 layout) for a demo record. */
export function demoId (name: string): string {
  const h = createHash('sha1').update(`screening-demo:${name}`).digest()
  h[6] = (h[6]! & 0x0f) | 0x50
  h[8] = (h[8]! & 0x3f) | 0x80
  const x = h.subarray(0, 16).toString('hex')
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`
}

/** Small deterministic PRNG (mulberry32). */
function random (seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const DAY = 86_400_000
/** Screens are spread over the 16 weeks before this instant. */
const ANCHOR = Date.parse('2026-11-02T00:00:00.000Z')

interface DemoJob {
  slug: string
  title: string
  status: JobStatus
  questions: number
  screens: number
  scored: boolean
  branding?: { logoUrl: string, brandColor: string }
  euCandidatesAllowed?: boolean
}

interface DemoOrg {
  key: string
  /** A second demo key, restricted to these scopes (issue 24): a 403 insufficient_scope to try. */
  restrictedKey?: Scope[]
  name: string
  plan: Plan
  user: { name: string, email: string }
  company: string
  jobs: DemoJob[]
}

const ORGS: DemoOrg[] = [
  {
    key: 'acme',
    restrictedKey: ['jobs:read'],
    name: 'Acme Recruiting',
    plan: 'pro',
    user: { name: 'Alice Pro', email: 'alice@acme.example' },
    company: 'Acme Corp',
    jobs: [
      { slug: 'senior-backend-engineer', title: 'Senior Backend Engineer', status: 'active', questions: 5, screens: 80, scored: true, branding: { logoUrl: 'https://cdn.acme.example/logo.png', brandColor: '#0f62fe' } },
      { slug: 'product-designer', title: 'Product Designer', status: 'active', questions: 4, screens: 36, scored: true },
      { slug: 'data-analyst', title: 'Data Analyst', status: 'active', questions: 3, screens: 0, scored: true },
      { slug: 'customer-success-manager', title: 'Customer Success Manager', status: 'active', questions: 4, screens: 12, scored: false },
      { slug: 'devops-engineer', title: 'DevOps Engineer', status: 'paused', questions: 6, screens: 24, scored: true, euCandidatesAllowed: false },
      { slug: 'sales-development-rep', title: 'Sales Development Representative', status: 'closed', questions: 3, screens: 18, scored: true },
    ],
  },
  {
    key: 'globex',
    name: 'Globex Hiring',
    plan: 'free',
    user: { name: 'Bob Free', email: 'bob@globex.example' },
    company: 'Globex',
    jobs: [
      { slug: 'warehouse-associate', title: 'Warehouse Associate', status: 'active', questions: 3, screens: 20, scored: true },
      { slug: 'office-manager', title: 'Office Manager', status: 'draft', questions: 2, screens: 0, scored: true },
    ],
  },
]

export interface DemoCredential {
  organization: string
  plan: Plan
  email: string
  key: string
  /** Set on a restricted key: its scopes. */
  scopes?: Scope[]
}

export interface DemoData {
  credentials: DemoCredential[]
  /** The Pro organization's branded job: the one the start-up banner's curl line fetches. */
  sampleJobId: string
}

/** What the seed creates, without touching a database (the banner of an existing database). */
export function demoData (): DemoData {
  return {
    credentials: [
      ...ORGS.map(o => ({ organization: o.name, plan: o.plan, email: o.user.email, key: demoApiKey(o.key).key })),
      ...ORGS.flatMap(o => o.restrictedKey === undefined ? [] : [{ organization: o.name, plan: o.plan, email: o.user.email, key: demoApiKey(`${o.key}:restricted`).key, scopes: o.restrictedKey }]),
    ],
    sampleJobId: demoId('job:acme:senior-backend-engineer'),
  }
}

/**
 * demoData() without the keys the database does not hold (or holds revoked): a database
 * seeded before the restricted demo key existed does not get a key printed that would
 * answer 401. `npm run db:seed` makes them all again.
 */
export async function existingDemoData (prisma: Db): Promise<DemoData> {
  const demo = demoData()
  const prefixes = new Set((await prisma.apiKey.findMany({
    where: { prefix: { in: demo.credentials.map(c => apiKeyPrefix(c.key)!) }, revokedAt: null },
    select: { prefix: true },
  })).map(k => k.prefix))
  return { ...demo, credentials: demo.credentials.filter(c => prefixes.has(apiKeyPrefix(c.key)!)) }
}

export async function seedDemoData (prisma: Db): Promise<DemoData> {
  const rand = random(20260105)
  await prisma.$transaction(async tx => {
    await tx.organization.deleteMany({ where: { id: { in: ORGS.map(o => demoId(`org:${o.key}`)) } } })
    for (const org of ORGS) {
      const organizationId = demoId(`org:${org.key}`)
      const userId = demoId(`user:${org.key}`)
      const key = demoApiKey(org.key)
      await tx.organization.create({
        data: {
          id: organizationId,
          name: org.name,
          plan: org.plan,
          subscriptionStatus: 'active',
          currentPeriodEnd: org.plan === 'pro' ? new Date('2036-01-01T00:00:00.000Z') : null,
          createdAt: new Date(ANCHOR - 200 * DAY),
          users: { create: { id: userId, name: org.user.name, email: org.user.email, createdAt: new Date(ANCHOR - 200 * DAY) } },
        },
      })
      await tx.apiKey.create({ data: { id: demoId(`key:${org.key}`), userId, name: 'Demo key', prefix: key.prefix, hash: key.hash, createdAt: new Date(ANCHOR - 199 * DAY) } })
      if (org.restrictedKey !== undefined) {
        const restricted = demoApiKey(`${org.key}:restricted`)
        await tx.apiKey.create({ data: { id: demoId(`key:${org.key}:restricted`), userId, name: `Demo key (${org.restrictedKey.join(', ')} only)`, prefix: restricted.prefix, hash: restricted.hash, scopes: org.restrictedKey, createdAt: new Date(ANCHOR - 199 * DAY) } })
      }

      for (const [index, job] of org.jobs.entries()) {
        const jobId = demoId(`job:${org.key}:${job.slug}`)
        const createdAt = new Date(ANCHOR - (130 - index) * DAY)
        await tx.job.create({
          data: {
            id: jobId,
            organizationId,
            userId,
            title: job.title,
            companyName: org.company,
            description: `${org.company} is hiring a ${job.title}. This screening interview asks ${job.questions} questions about your experience.`,
            status: job.status,
            slug: `${org.key}-${job.slug}`,
            shareToken: createHash('sha256').update(`share:${jobId}`).digest('hex'),
            logoUrl: job.branding?.logoUrl ?? null,
            brandColor: job.branding?.brandColor ?? null,
            showServiceBranding: job.branding === undefined,
            euCandidatesAllowed: job.euCandidatesAllowed ?? true,
            createdAt,
            updatedAt: new Date(createdAt.getTime() + 3 * DAY),
          },
        })
        await tx.question.createMany({
          data: Array.from({ length: job.questions }, (_, i) => ({
            id: demoId(`question:${jobId}:${i}`),
            jobId,
            position: i + 1,
            text: `Question ${i + 1} for the ${job.title} role`,
            createdAt,
          })),
        })
        await tx.screen.createMany({
          data: Array.from({ length: job.screens }, (_, i) => {
            const startedAt = ANCHOR - Math.floor(rand() * 16 * 7 * DAY)
            const roll = rand()
            const status: ScreenStatus = roll < 0.6 ? 'completed' : roll < 0.8 ? 'in_progress' : 'expired'
            const completedAt = status === 'completed' ? startedAt + Math.floor(rand() * 2 * DAY) : null
            const score = status === 'completed' && job.scored ? Math.round(40 + rand() * 600) / 10 : null
            return { id: demoId(`screen:${jobId}:${i}`), jobId, status, score, startedAt: new Date(startedAt), completedAt: completedAt === null ? null : new Date(completedAt) }
          }),
        })
      }
    }
  }, { timeout: 60_000 })
  return demoData()
}
