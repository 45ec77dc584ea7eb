import type { FastifyReply, FastifyRequest } from 'fastify'
import { hasProAccess } from '../auth/caller.js'
import { ApiError } from '../errors.js'

export const UPGRADE_MESSAGE = 'Pro subscription required'

/**
 * A preHandler that admits only callers with Pro access now. It runs after authentication
 * and validation and before the handler, so a free caller learns nothing about which jobs
 * exist. Usage: `{ preHandler: requirePro(upgradeUrl) }`.
 */
export function requirePro (upgradeUrl: string) {
  return async function planGuard (request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    if (!hasProAccess(request.caller.subscription)) {
      throw new ApiError(403, UPGRADE_MESSAGE, { upgrade_url: upgradeUrl })
    }
  }
}
