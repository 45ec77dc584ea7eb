import type { Prisma } from '../db/database.js'
import type { Caller } from './caller.js'

/** The caller behind a key hash, when the key exists, is not revoked and has not expired. */
export async function findCallerByKeyHash (prisma: Prisma, hash: Uint8Array<ArrayBuffer>, now: Date): Promise<(Caller & { lastUsedAt: Date | null }) | null> {
  const key = await prisma.apiKey.findFirst({
    where: { hash, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    select: {
      id: true,
      lastUsedAt: true,
      user: {
        select: {
          id: true,
          email: true,
          name: true,
          createdAt: true,
          organization: { select: { id: true, name: true, plan: true, subscriptionStatus: true, currentPeriodEnd: true } },
        },
      },
    },
  })
  if (key === null) return null
  const { organization, ...user } = key.user
  return {
    apiKeyId: key.id,
    lastUsedAt: key.lastUsedAt,
    user,
    organization: { id: organization.id, name: organization.name },
    subscription: { plan: organization.plan, status: organization.subscriptionStatus, currentPeriodEnd: organization.currentPeriodEnd },
  }
}

/** Records use of a key unless a later use was already recorded. */
export async function touchKey (prisma: Prisma, apiKeyId: string, now: Date, notAfter: Date): Promise<void> {
  await prisma.apiKey.updateMany({
    where: { id: apiKeyId, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: notAfter } }] },
    data: { lastUsedAt: now },
  })
}
