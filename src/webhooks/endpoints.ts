import { randomUUID } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { Prisma } from '../db/database.js'
import { CONFLICT_CODES } from '../error-codes.js'
import { ApiError, invalidRequest } from '../errors.js'
import { ENDPOINTS_MAX, UNLESS_DEPLOYMENT } from '../schemas/deployment-defaults.js'
import type { ErrorCase } from '../schemas/responses.js'
import { Prisma as PrismaNamespace } from '../generated/prisma/client.js'
import { historyId } from '../changes/history.js'
import { currentPoint } from '../changes/point.js'
import { OrNull } from '../db/row-schemas.js'
import { sql } from '../db/sql.js'
import { clientReader, type SqlReader } from '../db/sql-reader.js'
import { bounded, parseSnapshot } from '../changes/snapshot.js'
import { WEBHOOK_EVENT_TYPES, type WebhookEndpoint, type WebhookEndpointCreated } from '../schemas/webhooks.js'
import type { RefusalLog } from './egress.js'
import { storedPosition } from './position.js'
import type { Webhooks } from './webhooks.js'
import { newSigningSecret } from './signing.js'

// An organization's webhook endpoints, through Prisma's query builder (the design card's way:
// none of this is on a hot path). Each query names the caller's organization: another
// organization's endpoint is a 404, like a missing one.

const FIELDS = { id: true, url: true, events: true, description: true, status: true, disabledReason: true, createdAt: true, updatedAt: true } as const
type Row = { [K in keyof typeof FIELDS]: K extends 'status' ? 'enabled' | 'disabled' : K extends 'createdAt' | 'updatedAt' ? Date : K extends 'events' ? string[] : string | null } & { id: string, url: string }

export const presentEndpoint = (row: Row): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  events: row.events as WebhookEndpoint['events'],
  description: row.description,
  status: row.status,
  disabled_reason: row.disabledReason,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

/** What endpoints' changes use of the webhooks: the egress guard, the secrets' box, the settings. */
export type EndpointWebhooks = Pick<Webhooks, 'guard' | 'secrets' | 'settings'>

export interface Caller { organizationId: string, apiKeyId: string, log?: RefusalLog }

/** The URL, or a 400 on `body/url` saying why it may not be an endpoint's (the detail, in the log only). */
async function checkedUrl (webhooks: EndpointWebhooks, caller: Caller, url: string): Promise<string> {
  const refused = await webhooks.guard.refusal(url)
  if (refused === undefined) return url
  caller.log?.info({ organization: caller.organizationId, refused: refused.detail }, 'webhooks: an endpoint URL was refused')
  throw invalidRequest([{ path: 'body/url', message: refused.message }])
}

/**
 * Where a new endpoint starts in the change log: what the primary sees now (changes
 * committed later, or in progress now, are its events).
 */
async function startingPosition (prisma: Prisma): Promise<PrismaNamespace.InputJsonValue> {
  const point = await currentPoint(clientReader(prisma))
  return storedPosition({ since: bounded(parseSnapshot(point.snapshot)!), generation: point.generation, history: historyId(point.history), analytics: true, jobs: true, at: Date.now() }) as unknown as PrismaNamespace.InputJsonValue
}

const limitMessage = (max: number): string => `The organization has ${max} webhook endpoints, as many as it may: delete one first (disabled ones count too).`
/** The 409 past WEBHOOK_ENDPOINTS_MAX, and its account in the document. */
const endpointLimit = (max: number): ApiError => new ApiError(409, limitMessage(max), {}, {}, CONFLICT_CODES.endpointLimit)
export const ENDPOINT_LIMIT: ErrorCase = { description: `The organization has as many endpoints as it may (\`endpoint_limit_reached\`; ${ENDPOINTS_MAX} ${UNLESS_DEPLOYMENT}; disabled ones count): delete one first.`, code: CONFLICT_CODES.endpointLimit, error: limitMessage(ENDPOINTS_MAX) }

export async function createEndpoint (prisma: Prisma, webhooks: EndpointWebhooks, caller: Caller, body: { url: string, events?: string[], description?: string }): Promise<WebhookEndpointCreated> {
  const url = await checkedUrl(webhooks, caller, body.url)
  const id = randomUUID()
  const secret = newSigningSecret()
  const sealed = (await webhooks.secrets()).seal(id, secret)
  const position = await startingPosition(prisma)
  const max = webhooks.settings.endpointsMax
  // Counted and made under a lock of the organization's endpoints: two creations at once
  // cannot both take the last place. An advisory lock: no row a writer uses is locked.
  const row = await prisma.$transaction(async tx => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || ${caller.organizationId}, 0))`
    if (await tx.webhookEndpoint.count({ where: { organizationId: caller.organizationId } }) >= max) throw endpointLimit(max)
    return await tx.webhookEndpoint.create({
      data: {
        id,
        organizationId: caller.organizationId,
        apiKeyId: caller.apiKeyId,
        url,
        events: body.events ?? [...WEBHOOK_EVENT_TYPES],
        description: body.description ?? null,
        secret: sealed,
        position,
      },
      select: FIELDS,
    })
  })
  return { id: row.id, url: row.url, events: row.events as WebhookEndpoint['events'], description: row.description, status: 'enabled', secret, created_at: row.createdAt.toISOString() }
}

export async function findEndpoint (prisma: Prisma, organizationId: string, id: string): Promise<WebhookEndpoint | null> {
  const row = await prisma.webhookEndpoint.findFirst({ where: { id, organizationId }, select: FIELDS })
  return row === null ? null : presentEndpoint(row)
}

/** A page of the organization's endpoints, newest first, after `after` (the last of the previous page). */
export async function listEndpoints (prisma: Prisma, organizationId: string, limit: number, after?: { createdAt: Date, id: string }): Promise<{ endpoints: WebhookEndpoint[], last?: { createdAt: Date, id: string }, hasMore: boolean }> {
  const rows = await prisma.webhookEndpoint.findMany({
    where: { organizationId, ...(after !== undefined ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
    select: FIELDS,
  })
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { endpoints: page.map(presentEndpoint), hasMore: rows.length > limit, ...(last !== undefined ? { last: { createdAt: last.createdAt, id: last.id } } : {}) }
}

const OPERATOR_MESSAGE = 'An operator of the service disabled this endpoint: only an operator can enable it again (ask support).'
/** The 409 of a partner's change that only an operator may make (issue 55), and its account in the document. */
export const disabledByOperator = (): ApiError => new ApiError(409, OPERATOR_MESSAGE, {}, {}, CONFLICT_CODES.disabledByOperator)
export const DISABLED_BY_OPERATOR: ErrorCase = { description: 'An operator of the service disabled the endpoint (`disabled_by_operator`): only an operator enables it again.', code: CONFLICT_CODES.disabledByOperator, error: OPERATOR_MESSAGE }

/** An endpoint enabled again starts with no failures, and a later failing spell or disabling is told again. */
export const FAILURES_FORGOTTEN = { failingSince: null, consecutiveFailures: 0, failingNotifiedAt: null, disabledNotifiedAt: null }

const LockedRow = Type.Object({ reason: OrNull(Type.String()) })

/** The organization's endpoint locked against other changes (why it is disabled, if it is); undefined when not the organization's. */
export async function lockEndpoint (reader: SqlReader, organizationId: string, id: string): Promise<{ reason: string | null } | undefined> {
  const [row] = await reader.rows(LockedRow, sql`
    SELECT disabled_reason AS reason FROM webhook_endpoints WHERE id = ${id}::uuid AND organization_id = ${organizationId}::uuid FOR NO KEY UPDATE`)
  return row
}

export async function updateEndpoint (prisma: Prisma, webhooks: EndpointWebhooks, caller: Caller, id: string, body: { url?: string, events?: string[], description?: string | null, status?: 'enabled' | 'disabled' }): Promise<WebhookEndpoint | null> {
  const data: PrismaNamespace.WebhookEndpointUpdateManyMutationInput & { apiKeyId?: string } = {}
  // A new URL is told what the key that set it may read, not what its maker's key could: a
  // key without analytics:read cannot point an analytics-reading endpoint at itself.
  if (body.url !== undefined) Object.assign(data, { url: await checkedUrl(webhooks, caller, body.url), apiKeyId: caller.apiKeyId })
  if (body.events !== undefined) data.events = body.events
  if (body.description !== undefined) data.description = body.description
  // The row locked first: an operator's disable, whenever it lands, is never undone here.
  return await prisma.$transaction(async tx => {
    const row = await lockEndpoint(clientReader(tx), caller.organizationId, id)
    if (row === undefined) return null
    const byOperator = row.reason === 'operator'
    if (byOperator && body.status === 'enabled') throw disabledByOperator()
    // Enabled again: told what the key enabling it may read, from where it stopped (what it
    // missed while disabled is sent then), its failures forgotten.
    // (An endpoint enabled already keeps its failing spell: asking again does not end it.)
    if (body.status === 'enabled') Object.assign(data, { status: 'enabled', disabledReason: null, ...(row.reason !== null ? FAILURES_FORGOTTEN : {}), apiKeyId: caller.apiKeyId })
    if (body.status === 'disabled' && !byOperator) Object.assign(data, { status: 'disabled', disabledReason: 'requested' })
    if (Object.keys(data).length > 0) await tx.webhookEndpoint.updateMany({ where: { id, organizationId: caller.organizationId }, data })
    return await tx.webhookEndpoint.findFirst({ where: { id, organizationId: caller.organizationId }, select: FIELDS }).then(found => found === null ? null : presentEndpoint(found))
  })
}

export async function deleteEndpoint (prisma: Prisma, organizationId: string, id: string): Promise<boolean> {
  return (await prisma.webhookEndpoint.deleteMany({ where: { id, organizationId } })).count > 0
}

/**
 * A new secret; the old one signs too for `graceSeconds` (none with 0). Null when the endpoint
 * is not the organization's. One statement: two rotations at once leave the second's previous
 * secret the first's new one, so both answered secrets sign during the grace.
 */
export async function rotateSecret (prisma: Prisma, webhooks: EndpointWebhooks, organizationId: string, id: string, graceSeconds: number): Promise<{ secret: string, previousUntil: Date | null } | null> {
  const secret = newSigningSecret()
  const sealed = (await webhooks.secrets()).seal(id, secret)
  const until = await replaceSecret(clientReader(prisma), organizationId, id, sealed, graceSeconds)
  return until === undefined ? null : { secret, previousUntil: until }
}

const ReplacedRow = Type.Object({ until: OrNull(Type.Date()) })

/** Seals in `sealed` as the endpoint's secret: until when the old one signs too (null: not at all); undefined when not the organization's. */
export async function replaceSecret (db: SqlReader, organizationId: string, id: string, sealed: Uint8Array, graceSeconds: number): Promise<Date | null | undefined> {
  const [row] = await db.rows(ReplacedRow, sql`
    UPDATE webhook_endpoints
    SET previous_secret = CASE WHEN ${graceSeconds}::int > 0 THEN secret END,
        previous_secret_until = CASE WHEN ${graceSeconds}::int > 0 THEN now() + ${graceSeconds}::int * interval '1 second' END,
        secret = ${sealed}, updated_at = now()
    WHERE id = ${id}::uuid AND organization_id = ${organizationId}::uuid
    RETURNING previous_secret_until AS until`)
  return row?.until
}
