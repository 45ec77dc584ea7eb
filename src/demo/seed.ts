import { createHash } from 'node:crypto'
import { apiKeyPrefix, demoApiKey } from '../auth/api-keys.js'
import type { Scope } from '../auth/scopes.js'
import type { Prisma as Db } from '../db/database.js'
import type { Plan, ScreenStatus } from '../generated/prisma/enums.js'
import { ORGS, type DemoJob, type DemoOrg } from './demo-organizations.js'

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

type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0]

/** A demo organization, its user and keys. */
async function seedOrganization (tx: Tx, org: DemoOrg): Promise<{ organizationId: string, userId: string }> {
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
  return { organizationId, userId }
}

/** A demo job with its questions and screens; `rand` drawn in the same order on every run. */
async function seedJob (tx: Tx, org: DemoOrg, owner: { organizationId: string, userId: string }, job: DemoJob, index: number, rand: () => number): Promise<void> {
  const jobId = demoId(`job:${org.key}:${job.slug}`)
  const createdAt = new Date(ANCHOR - (130 - index) * DAY)
  await tx.job.create({
    data: {
      id: jobId,
      ...owner,
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

export async function seedDemoData (prisma: Db): Promise<DemoData> {
  const rand = random(20260105)
  await prisma.$transaction(async tx => {
    await tx.organization.deleteMany({ where: { id: { in: ORGS.map(o => demoId(`org:${o.key}`)) } } })
    for (const org of ORGS) {
      const owner = await seedOrganization(tx, org)
      for (const [index, job] of org.jobs.entries()) await seedJob(tx, org, owner, job, index, rand)
    }
  }, { timeout: 60_000 })
  return demoData()
}
