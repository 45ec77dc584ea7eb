import type { Prisma } from '../db/database.js'
import type { LoadedCaller } from './caller-cache.js'
import { grantedScopes } from './scopes.js'

/**
 * The caller behind a key hash, when the key exists, is not revoked and has not expired:
 * one statement (relationJoins: the key, its user and organization in one join).
 */
export async function findCallerByKeyHash (prisma: Prisma, hash: Uint8Array<ArrayBuffer>, now: Date): Promise<LoadedCaller | null> {
  const key = await prisma.apiKey.findFirst({
    relationLoadStrategy: 'join',
    where: { hash, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    select: {
      id: true,
      lastUsedAt: true,
      expiresAt: true,
      scopes: true,
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
    scopes: grantedScopes(key.scopes),
    lastUsedAt: key.lastUsedAt,
    expiresAt: key.expiresAt,
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
