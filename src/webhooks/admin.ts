import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { FAILURES_FORGOTTEN } from './endpoints.js'
import { recover, type Scheduled } from './recovery.js'
import { Webhooks } from './webhooks.js'
import { webhookSettings } from './webhook-settings.js'

// The operator's webhook commands (npm run admin -- list-endpoints, disable-endpoint,
// enable-endpoint, recover-endpoint): an endpoint seen and acted on across organizations,
// without SQL.

export async function listEndpoints (database: Database, organizationId?: string) {
  const rows = await database.prisma.webhookEndpoint.findMany({
    where: organizationId === undefined ? {} : { organizationId },
    orderBy: [{ organizationId: 'asc' }, { createdAt: 'asc' }],
    select: { id: true, organizationId: true, url: true, events: true, status: true, disabledReason: true, failingSince: true, dispatchFailures: true, dispatchError: true, dispatchPausedUntil: true, createdAt: true },
  })
  return rows
}

/** Disables an endpoint (reason `operator`) or enables it again; false when there is none. */
export async function setEndpointStatus (database: Database, id: string, enabled: boolean): Promise<boolean> {
  const { count } = await database.prisma.webhookEndpoint.updateMany({
    where: { id },
    data: enabled ? { status: 'enabled', disabledReason: null, ...FAILURES_FORGOTTEN } : { status: 'disabled', disabledReason: 'operator' },
  })
  return count > 0
}

/** Schedules again what the endpoint was given up on since `since` (as POST …/recover); null when there is no such endpoint. */
export async function recoverEndpoint (database: Database, config: Config, id: string, since: Date): Promise<Scheduled | null> {
  if (await database.prisma.webhookEndpoint.count({ where: { id } }) === 0) return null
  // Only the queue: the command delivers nothing itself.
  const webhooks = new Webhooks(database, { ...webhookSettings(config), worker: false }, { warn: () => {} } as never)
  try {
    return await recover(database.prisma, webhooks, id, since)
  } finally {
    await webhooks.stop(1000)
  }
}
