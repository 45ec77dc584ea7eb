import type { FastifyInstance } from 'fastify'
import type { Tenant } from './fixtures.js'

// Webhook endpoints as a partner makes them, through the API.

export interface MadeEndpoint { id: string, secret: string }

export async function makeEndpoint (app: FastifyInstance, tenant: Tenant, url: string, body: Record<string, unknown> = {}): Promise<MadeEndpoint> {
  const res = await app.inject({ method: 'POST', url: '/api/webhook_endpoints', headers: tenant.auth, payload: { url, ...body } })
  if (res.statusCode !== 201) throw new Error(`creating an endpoint: ${res.statusCode} ${res.body}`)
  const { id, secret } = res.json() as MadeEndpoint
  return { id, secret }
}

export interface DeliveryRow { id: string, attempted_at: string, event_id: string, event_type: string, job_id: string | null, attempt: number, outcome: string, status_code: number | null, error: string | null, next_attempt_at: string | null }

/** Every attempt recorded for an endpoint, newest first. */
export async function deliveriesOf (app: FastifyInstance, tenant: Tenant, endpointId: string): Promise<DeliveryRow[]> {
  const rows: DeliveryRow[] = []
  let cursor: string | null = null
  do {
    const res: Awaited<ReturnType<FastifyInstance['inject']>> = await app.inject({ url: `/api/webhook_endpoints/${endpointId}/deliveries?limit=100${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, headers: tenant.auth })
    if (res.statusCode !== 200) throw new Error(`deliveries: ${res.statusCode} ${res.body}`)
    const page = res.json() as { data: DeliveryRow[], next_cursor: string | null }
    rows.push(...page.data)
    cursor = page.next_cursor
  } while (cursor !== null)
  return rows
}
