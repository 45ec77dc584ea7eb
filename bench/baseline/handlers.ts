// The three answers: credential, then (analytics) the plan, then the job of the caller's
// organization; each a single statement after the credential check.
import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { historyId, seenByBoth, type Cursors } from './cursor.js'
import { analytics, job } from './present.js'
import type { CallerRow, Queries } from './queries.js'
import { sendError, sendOk } from './reply.js'

const BEARER = /^bearer +(\S+) *$/i
const KEY = /^srk_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{43}$/
const TZ = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/

export class Handlers {
  constructor (private readonly queries: Queries, private readonly cursors: Cursors, private readonly upgradeUrl: string) {}

  /** The caller, or undefined after answering 401. Malformed keys cost no query. */
  async caller (req: IncomingMessage, res: ServerResponse): Promise<CallerRow | undefined> {
    const header = req.headers.authorization
    const key = header === undefined ? undefined : BEARER.exec(header)?.[1]
    const found = key !== undefined && KEY.test(key) ? await this.queries.caller(createHash('sha256').update(key).digest()) : undefined
    if (found === undefined) sendError(res, 401, 'A valid API key is required: send `Authorization: Bearer <api key>`.')
    return found
  }

  async job (req: IncomingMessage, res: ServerResponse, caller: CallerRow, jobId: string): Promise<void> {
    const row = await this.queries.job(caller.organization_id, jobId)
    if (row === undefined) return sendError(res, 404, 'Job not found')
    sendOk(req, res, job(row))
  }

  async analytics (req: IncomingMessage, res: ServerResponse, caller: CallerRow, jobId: string, query: URLSearchParams): Promise<void> {
    const tz = query.get('tz') ?? 'UTC'
    if (!TZ.test(tz) || tz.length > 64) return sendError(res, 400, 'Invalid request: querystring/tz')
    if (!caller.pro) return sendError(res, 403, 'Pro subscription required', { upgrade_url: this.upgradeUrl })
    let row
    try {
      row = await this.queries.analytics(caller.organization_id, jobId, tz)
    } catch (error) {
      // PostgreSQL has the last word on zone names (22023: unknown time zone).
      if ((error as { code?: string }).code === '22023') return sendError(res, 400, 'Invalid request: querystring/tz')
      throw error
    }
    if (row === undefined) return sendError(res, 404, 'Job not found')
    sendOk(req, res, analytics(row))
  }

  async list (req: IncomingMessage, res: ServerResponse, caller: CallerRow, query: URLSearchParams): Promise<void> {
    const limitParam = query.get('limit')
    const limit = limitParam === null ? 20 : Number(limitParam)
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) return sendError(res, 400, 'Invalid request: querystring/limit')
    const cursor = query.get('cursor')
    const after = cursor === null ? undefined : this.cursors.decode(cursor, caller.organization_id)
    if (cursor !== null && after === undefined) return sendError(res, 400, 'Invalid request: querystring/cursor')
    const rows = await this.queries.page(caller.organization_id, limit, after)
    const last = rows.at(-1)
    // The bench's organizations have jobs, so a page always has a row with its snapshot.
    const seen = last === undefined ? undefined : seenByBoth(after?.seen, last.snapshot)
    const generation = after?.generation ?? last?.generation ?? 0
    const history = after?.history ?? (last?.history !== undefined ? historyId(last.history) : '')
    sendOk(req, res, {
      data: rows.map(job),
      next_cursor: last?.has_more === true ? this.cursors.encode(caller.organization_id, { createdAt: last.created_at.toISOString(), id: last.id, ...(seen !== undefined ? { seen, generation, history } : {}) }) : null,
      sync_token: last?.has_more !== true && seen !== undefined ? this.cursors.syncToken(caller.organization_id, seen, generation, history) : null,
      deleted_ids: [],
    })
  }
}
