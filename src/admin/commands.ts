import { Type, type Static } from '@sinclair/typebox'
import { generateApiKey } from '../auth/api-keys.js'
import type { Prisma } from '../db/database.js'
import { OrNull } from '../db/row-schemas.js'
import { sql } from '../db/sql.js'
import { clientReader, type SqlReader } from '../db/sql-reader.js'
import type { Plan, SubscriptionStatus } from '../generated/prisma/enums.js'

// What an operator needs to bootstrap and run a deployment without SQL. Each function is
// one database operation; scripts/admin.ts is the command line around them.

export async function createOrganization (prisma: Prisma, input: { name: string, plan?: Plan, status?: SubscriptionStatus, currentPeriodEnd?: Date | null }) {
  return await prisma.organization.create({
    data: { name: input.name, plan: input.plan ?? 'free', subscriptionStatus: input.status ?? 'active', currentPeriodEnd: input.currentPeriodEnd ?? null },
  })
}

export async function createUser (prisma: Prisma, input: { organizationId: string, email: string, name: string }) {
  return await prisma.user.create({ data: input })
}

/**
 * Creates a key and returns it in clear: the only time it is ever available. Without
 * `scopes`, the column's default: every scope (`*`, src/auth/scopes.ts). The column is
 * neither written nor read then, so that this works on a database migrated to before it
 * (the migration tests make tenants on those).
 */
export async function createApiKey (prisma: Prisma, input: { userId: string, name?: string, expiresAt?: Date | null, scopes?: string[] }) {
  const { key, prefix, hash } = generateApiKey()
  if (input.scopes !== undefined) {
    const row = await prisma.apiKey.create({
      data: { userId: input.userId, name: input.name ?? 'API key', prefix, hash, expiresAt: input.expiresAt ?? null, scopes: input.scopes },
      select: { id: true, prefix: true, expiresAt: true, scopes: true },
    })
    return { ...row, key }
  }
  // Raw: the query builder's INSERT returns every column of the model, scopes included,
  // even when the select leaves it out.
  return { ...await insertApiKey(clientReader(prisma), { ...input, prefix, hash }), key }
}

const NewKeyRow = Type.Object({ id: Type.String(), prefix: Type.String(), expiresAt: OrNull(Type.Date()) })

/** A key's row, without its scopes (the column's default): its id, prefix and expiry. */
export async function insertApiKey (db: SqlReader, input: { userId: string, name?: string, prefix: string, hash: Uint8Array, expiresAt?: Date | null }): Promise<Static<typeof NewKeyRow>> {
  const [row] = await db.rows(NewKeyRow, sql`
    INSERT INTO api_keys (user_id, name, prefix, hash, expires_at)
    VALUES (${input.userId}::uuid, ${input.name ?? 'API key'}, ${input.prefix}, ${Buffer.from(input.hash)}, ${input.expiresAt ?? null}::timestamptz)
    RETURNING id, prefix, expires_at AS "expiresAt"`)
  return row!
}

/**
 * Replaces a key's scopes (as parseScopeList gives them), by id or prefix; null when no
 * active key matched. Every instance drops its cached callers when this commits (the
 * trigger of migration api_key_scopes), as for a revocation.
 */
export async function setApiKeyScopes (prisma: Prisma, by: { id: string } | { prefix: string }, scopes: string[]) {
  const { count } = await prisma.apiKey.updateMany({ where: { ...by, revokedAt: null }, data: { scopes } })
  if (count === 0) return null
  return await prisma.apiKey.findFirstOrThrow({ where: by, select: { id: true, prefix: true, name: true, scopes: true } })
}

/** Revokes by id or by the key's readable prefix; false when no active key matched. */
export async function revokeApiKey (prisma: Prisma, by: { id: string } | { prefix: string }): Promise<boolean> {
  const { count } = await prisma.apiKey.updateMany({ where: { ...by, revokedAt: null }, data: { revokedAt: new Date() } })
  return count > 0
}

export async function setPlan (prisma: Prisma, input: { organizationId: string, plan: Plan, status?: SubscriptionStatus, currentPeriodEnd?: Date | null }) {
  return await prisma.organization.update({
    where: { id: input.organizationId },
    data: {
      plan: input.plan,
      ...(input.status !== undefined ? { subscriptionStatus: input.status } : {}),
      ...(input.currentPeriodEnd !== undefined ? { currentPeriodEnd: input.currentPeriodEnd } : {}),
    },
  })
}
