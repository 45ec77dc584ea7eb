import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { createApiKey, createOrganization, createUser } from '../../src/admin/commands.js'
import type { Prisma } from '../../src/db/database.js'
import type { JobStatus, Plan, ScreenStatus, SubscriptionStatus } from '../../src/generated/prisma/enums.js'

/** An organization with one user and one API key, as a test needs it. */
export interface Tenant {
  organizationId: string
  userId: string
  apiKeyId: string
  key: string
  auth: { authorization: string }
}

export async function createTenant (prisma: Prisma, options: { plan?: Plan, status?: SubscriptionStatus, currentPeriodEnd?: Date | null, name?: string, scopes?: string[] } = {}): Promise<Tenant> {
  const org = await createOrganization(prisma, { name: options.name ?? `Org ${randomUUID().slice(0, 8)}`, plan: options.plan ?? 'pro', status: options.status ?? 'active', currentPeriodEnd: options.currentPeriodEnd ?? null })
  const user = await createUser(prisma, { organizationId: org.id, email: `${randomUUID()}@example.test`, name: 'Test User' })
  const key = await createApiKey(prisma, { userId: user.id, ...(options.scopes !== undefined ? { scopes: options.scopes } : {}) })
  return { organizationId: org.id, userId: user.id, apiKeyId: key.id, key: key.key, auth: { authorization: `Bearer ${key.key}` } }
}

/** Another key of the tenant's user, with `scopes` (as stored: scope names, or ['*']). */
export async function keyWithScopes (prisma: Prisma, tenant: Tenant, scopes: string[]): Promise<Tenant> {
  const key = await createApiKey(prisma, { userId: tenant.userId, scopes })
  return { ...tenant, apiKeyId: key.id, key: key.key, auth: { authorization: `Bearer ${key.key}` } }
}

export interface JobInput {
  title?: string
  status?: JobStatus
  logoUrl?: string | null
  brandColor?: string | null
  createdAt?: Date
  questions?: number
}

export async function createJob (prisma: Prisma, tenant: Tenant, input: JobInput = {}) {
  const id = randomUUID()
  const job = await prisma.job.create({
    data: {
      id,
      organizationId: tenant.organizationId,
      userId: tenant.userId,
      title: input.title ?? 'Test Job',
      companyName: 'Test Company',
      description: 'A job for tests.',
      status: input.status ?? 'active',
      slug: `job-${id}`,
      shareToken: randomBytes(32).toString('hex'),
      logoUrl: input.logoUrl ?? null,
      brandColor: input.brandColor ?? null,
      ...(input.createdAt !== undefined ? { createdAt: input.createdAt } : {}),
    },
  })
  if ((input.questions ?? 0) > 0) {
    await prisma.question.createMany({ data: Array.from({ length: input.questions ?? 0 }, (_, i) => ({ jobId: id, position: i + 1, text: `Q${i + 1}` })) })
  }
  return job
}

export interface ScreenInput {
  status: ScreenStatus
  score?: number | null
  completedAt?: Date | null
  startedAt?: Date
}

export async function createScreens (prisma: Prisma, jobId: string, screens: ScreenInput[]): Promise<void> {
  await prisma.screen.createMany({
    data: screens.map(s => ({
      jobId,
      status: s.status,
      score: s.score ?? null,
      completedAt: s.completedAt ?? null,
      startedAt: s.startedAt ?? new Date(Math.min(Date.now(), s.completedAt?.getTime() ?? Date.now())),
    })),
  })
}

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex')
