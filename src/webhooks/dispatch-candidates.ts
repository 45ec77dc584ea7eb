import { Type, type Static } from '@sinclair/typebox'
import { hasProAccess } from '../auth/caller.js'
import { grantedScopes } from '../auth/scopes.js'
import { OrNull } from '../db/row-schemas.js'
import type { SqlReader } from '../db/sql-reader.js'
import { sql } from '../db/sql.js'
import { readPosition, type EndpointPosition } from './position.js'

// The endpoints a dispatcher run may tell (src/webhooks/dispatch.ts), read as groups (one row
// per organization, position, subscription and maker key: no URL, no secret, those are read
// for the endpoints leased only), what each may be told now, and the chunks they are read in:
// endpoints of one organization at one position, told the same, at most CHUNK of them, so
// that a run's events are bounded whatever one organization has.

/** Endpoints read together at most: a run hands out at least a change to each of a chunk's. */
export const CHUNK = 100

export const CandidateGroupRow = Type.Object({
  organizationId: Type.String(),
  position: OrNull(Type.Unknown()),
  /** text[] as JSON (rows.ts converts no array), as are scopes and ids. */
  events: Type.Unknown(),
  dispatchFailures: Type.Integer(),
  keyFound: Type.Boolean(),
  revokedAt: OrNull(Type.Date()),
  expiresAt: OrNull(Type.Date()),
  scopes: Type.Unknown(),
  keyOrganizationId: OrNull(Type.String()),
  plan: Type.String(),
  subscriptionStatus: Type.String(),
  currentPeriodEnd: OrNull(Type.Date()),
  ids: Type.Unknown(),
})
export type CandidateGroup = Static<typeof CandidateGroupRow>

/**
 * Every enabled endpoint no batch is being sent to (its lease) and not paused after failed
 * reads, locked until the run commits, first thing after the snapshot: a partner's PATCH then
 * waits for the run instead of failing it at its end (40001 on the position's UPDATE); one
 * being changed right now is left to the next run. FOR NO KEY UPDATE: the attempts' foreign
 * key checks do not wait. Grouped, so that 10,000 endpoints of one organization are a row.
 */
export async function dispatchCandidates (reader: SqlReader): Promise<CandidateGroup[]> {
  return await reader.rows(CandidateGroupRow, sql`
    WITH locked AS MATERIALIZED (
      SELECT id, organization_id, events, position, dispatch_failures, api_key_id FROM webhook_endpoints
      WHERE status = 'enabled' AND (sending_until IS NULL OR sending_until < now())
        AND (dispatch_paused_until IS NULL OR dispatch_paused_until < now())
      FOR NO KEY UPDATE SKIP LOCKED
    )
    SELECT l.organization_id::text AS "organizationId", l.position, to_jsonb(l.events) AS events, l.dispatch_failures AS "dispatchFailures",
           k.id IS NOT NULL AS "keyFound", k.revoked_at AS "revokedAt", k.expires_at AS "expiresAt", to_jsonb(k.scopes) AS scopes,
           u.organization_id::text AS "keyOrganizationId", o.plan::text AS plan, o.subscription_status::text AS "subscriptionStatus",
           o.current_period_end AS "currentPeriodEnd", to_jsonb(array_agg(l.id::text ORDER BY l.id)) AS ids
    FROM locked l
    JOIN organizations o ON o.id = l.organization_id
    LEFT JOIN api_keys k ON k.id = l.api_key_id
    LEFT JOIN users u ON u.id = k.user_id
    GROUP BY l.organization_id, l.position, l.events, l.dispatch_failures, k.id, u.organization_id, o.id
    ORDER BY l.organization_id, min(l.id::text)`)
}

export interface Allowed { jobs: boolean, analytics: boolean }

/** A text[] column read as JSON. */
export const strings = (value: unknown): string[] => Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []

/**
 * What a group's endpoints may be told now: what the key that made them may read (the rule
 * sync follows), and nothing once that key is revoked, expired or deleted (`key_revoked`) or
 * its user belongs to another organization (`key_moved`: a person who left is told nothing).
 */
export function readable (g: CandidateGroup, now: Date): Allowed | 'key_revoked' | 'key_moved' {
  if (!g.keyFound || g.revokedAt !== null || (g.expiresAt !== null && g.expiresAt <= now)) return 'key_revoked'
  if (g.keyOrganizationId !== g.organizationId) return 'key_moved'
  const scopes = grantedScopes(strings(g.scopes))
  const subscription = { plan: g.plan as 'free' | 'pro', status: g.subscriptionStatus as 'active', currentPeriodEnd: g.currentPeriodEnd }
  return { jobs: scopes.includes('jobs:read'), analytics: scopes.includes('analytics:read') && hasProAccess(subscription, now) }
}

/** An endpoint of a chunk: what it subscribed to, and its failed reads in a row. */
export interface ChunkEndpoint { id: string, events: string[], dispatchFailures: number }

/** Endpoints read together: one organization, one position (undefined: unreadable, starts over), told the same. */
export interface Chunk {
  /** Its organization and first endpoint: its place in the round robin (dispatch.ts). */
  key: string
  organizationId: string
  position: EndpointPosition | undefined
  allowed: Allowed
  endpoints: ChunkEndpoint[]
}

/** Failed reads after which a chunk's position starts over (a sync.reset), whatever made it fail. */
export const START_OVER_AFTER_FAILURES = 10

/** The chunks of the endpoints that may be told, in the groups' order; and those that may not, by why. */
export function chunksOf (groups: CandidateGroup[], now: Date): { chunks: Chunk[], stopped: Map<'key_revoked' | 'key_moved', string[]> } {
  const chunks: Chunk[] = []
  const filling = new Map<string, Chunk>()
  const stopped = new Map<'key_revoked' | 'key_moved', string[]>()
  for (const group of groups) {
    const ids = strings(group.ids)
    const allowed = readable(group, now)
    if (typeof allowed === 'string') { stopped.set(allowed, (stopped.get(allowed) ?? []).concat(ids)); continue }
    // An endpoint whose reads kept failing starts over: its old position is the likely cause.
    const position = group.dispatchFailures >= START_OVER_AFTER_FAILURES ? undefined : readPosition(group.position)
    const together = `${group.organizationId}|${position === undefined ? '-' : JSON.stringify(group.position)}|${allowed.jobs}|${allowed.analytics}`
    const events = strings(group.events)
    for (const id of ids) {
      let chunk = filling.get(together)
      if (chunk === undefined || chunk.endpoints.length >= CHUNK) {
        chunk = { key: `${group.organizationId}|${id}`, organizationId: group.organizationId, position, allowed, endpoints: [] }
        filling.set(together, chunk)
        chunks.push(chunk)
      }
      chunk.endpoints.push({ id, events, dispatchFailures: group.dispatchFailures })
    }
  }
  return { chunks, stopped }
}
