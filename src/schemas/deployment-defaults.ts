import { ConfigSchema } from '../config.js'

// The operator's settings a partner meets (how long a sync token lasts, when a failing endpoint
// is disabled...), as the document words them: their defaults in src/config.ts and the intro's
// "unless your deployment says otherwise", never the variables' names, which are the operator's
// (test/openapi/openapi.test.ts checks that none reaches the document).

const settings = ConfigSchema.properties
const UNITS = { ms: 'millisecond', s: 'second', m: 'minute', h: 'hour', d: 'day' } as const
const counted = (n: number, unit: string): string => `${n} ${unit}${n === 1 ? '' : 's'}`
/** A duration of the configuration's form (`5d`) in words (`5 days`). */
const spelled = (duration: string): string => {
  const [, n, unit] = /^(\d+)(ms|s|m|h|d)$/.exec(duration)!
  return counted(Number(n), UNITS[unit as keyof typeof UNITS])
}

export const UNLESS_DEPLOYMENT = 'unless your deployment says otherwise'

/** How long a change stays in the change log, so how long a sync token can be answered. */
export const SYNC_RETENTION = settings.SYNC_RETENTION_HOURS.default % 24 === 0
  ? counted(settings.SYNC_RETENTION_HOURS.default / 24, 'day')
  : counted(settings.SYNC_RETENTION_HOURS.default, 'hour')
/** How long every delivery to an endpoint fails before it is disabled. */
export const DISABLE_AFTER = spelled(settings.WEBHOOK_DISABLE_AFTER.default)
/** Failed attempts in a row after which the organization's other endpoints are told. */
export const FAILING_AFTER: number = settings.WEBHOOK_FAILING_AFTER.default
/** Webhook endpoints an organization may have. */
export const ENDPOINTS_MAX: number = settings.WEBHOOK_ENDPOINTS_MAX.default
/** How long the record of a delivery attempt is kept. */
export const DELIVERY_RETENTION = counted(settings.WEBHOOK_DELIVERY_RETENTION_DAYS.default, 'day')
