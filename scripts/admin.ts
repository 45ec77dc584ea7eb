// npm run admin -- <command> [options]: bootstrap and operate a deployment without SQL.
// Works on the database the environment names (DATABASE_URL, else the embedded one).
// Every argument is checked before the database is opened (or, embedded, created and migrated),
// and the database's modules (PGlite, pg, Prisma: about a second) are loaded only then: a
// mistyped command answers at once and touches nothing.
import { parseArgs } from 'node:util'
import { createApiKey, createOrganization, createUser, revokeApiKey, setApiKeyScopes, setPlan } from '../src/admin/commands.js'
import { EVERY_SCOPE, parseScopeList } from '../src/auth/scopes.js'
import { foldScreenStats, hasDrift, verifyScreenStats } from '../src/admin/screen-stats.js'
import { expireSyncTokens } from '../src/admin/sync-tokens.js'
import type { Config } from '../src/config.js'
import type { Database, Prisma } from '../src/db/database.js'
import { listEndpoints, recoverEndpoint, setEndpointStatus } from '../src/webhooks/admin.js'
import type { Plan, SubscriptionStatus } from '../src/generated/prisma/enums.js'
import { clientReader } from '../src/db/sql-reader.js'

const USAGE = `usage: npm run admin -- <command> [options]

  create-org   --name <name> [--plan free|pro] [--status active|trialing|past_due|canceled] [--period-end <ISO date>]
  create-user  --org <organization id> --email <email> --name <name>
  create-key   --user <user id> [--name <label>] [--expires <ISO date>] [--scopes <scopes>]
               prints the key once. --scopes: jobs:read, analytics:read, webhooks:read,
               webhooks:write, comma-separated, or all
               (the default: every scope, including any added later)
  set-scopes   --prefix <srk_xxxxxxxx> | --id <api key id> --scopes <scopes>
               replaces an active key's scopes; every instance applies it within a second
  revoke-key   --prefix <srk_xxxxxxxx> | --id <api key id>
  set-plan     --org <organization id> --plan free|pro [--status <status>] [--period-end <ISO date>|none]
  verify-stats [--fix] [--timeout <seconds>]
               recompute the screen summaries from the screens, a batch of jobs at a time (progress
               on stderr); exit 1 on any difference. --fix: repair every job that differs, in SQL,
               beside live writers; exit 1 if any still differs. No time limit unless --timeout.
  fold-stats   fold the summary deltas into the summaries now (the API does so every second)
  expire-sync-tokens
               every sync token made so far answers 410, so partners walk again: after a restore
               from a backup, a failover that may have lost committed transactions, or changes
               made with the triggers off (session_replication_role = replica, a load without them)
  list-endpoints   [--org <organization id>]
               webhook endpoints: url, status, why disabled, failing since when, and
               the dispatcher's failed reads of its changes (dispatchError, paused until when)
  disable-endpoint --id <endpoint id>
               stops sending to it (reason: operator); the partner sees it disabled
  enable-endpoint  --id <endpoint id>
               sends again, from where it stopped
  recover-endpoint --id <endpoint id> --since <ISO date>
               sends again every event given up on (or recorded while disabled) since then`

class UsageError extends Error {}

const PLANS = ['free', 'pro'] as const
const STATUSES = ['active', 'trialing', 'past_due', 'canceled'] as const
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function oneOf<T extends string> (name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`)
  return value as T
}
function required (name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`)
  return value
}
function uuid (name: string, value: string | undefined): string {
  if (!UUID.test(required(name, value))) throw new UsageError(`--${name} must be a UUID`)
  return value as string
}
function scopes (value: string | undefined): string[] {
  const parsed = parseScopeList(required('scopes', value))
  if ('error' in parsed) throw new UsageError(`--scopes: ${parsed.error}`)
  return parsed.scopes
}
function keyByPrefixOrId (o: Options): { id: string } | { prefix: string } {
  if ((o.prefix === undefined) === (o.id === undefined)) throw new UsageError('give exactly one of --prefix and --id')
  return o.id !== undefined ? { id: uuid('id', o.id) } : { prefix: required('prefix', o.prefix) }
}
function date (name: string, value: string | undefined): Date | null | undefined {
  if (value === undefined) return undefined
  if (value === 'none') return null
  const d = new Date(value)
  if (Number.isNaN(d.getTime())) throw new UsageError(`--${name} must be an ISO 8601 date`)
  return d
}

type Options = Record<string, string | undefined>
/** A command checks its options and returns what it does with the database. */
type Command = (o: Options) => (prisma: Prisma, database: Database, config: Config) => Promise<unknown>
const commands: Record<string, Command> = {
  'create-org': o => {
    const input = { name: required('name', o.name), plan: oneOf('plan', o.plan, PLANS) ?? 'free', status: oneOf('status', o.status, STATUSES) ?? 'active', currentPeriodEnd: date('period-end', o['period-end']) ?? null }
    return async prisma => await createOrganization(prisma, input)
  },
  'create-user': o => {
    const input = { organizationId: uuid('org', o.org), email: required('email', o.email), name: required('name', o.name) }
    return async prisma => await createUser(prisma, input)
  },
  'create-key': o => {
    // Scopes written either way, so that the output shows them as stored.
    const input = { userId: uuid('user', o.user), ...(o.name !== undefined ? { name: o.name } : {}), expiresAt: date('expires', o.expires) ?? null, scopes: o.scopes !== undefined ? scopes(o.scopes) : [EVERY_SCOPE] }
    return async prisma => ({ ...await createApiKey(prisma, input), note: 'Store the key now: it is not shown again.' })
  },
  'set-scopes': o => {
    const by = keyByPrefixOrId(o)
    const list = scopes(o.scopes)
    return async prisma => {
      const updated = await setApiKeyScopes(prisma, by, list)
      if (updated === null) throw new Error('No active key matched.')
      return updated
    }
  },
  'revoke-key': o => {
    const by = keyByPrefixOrId(o)
    return async prisma => {
      if (!await revokeApiKey(prisma, by)) throw new Error('No active key matched.')
      return { revoked: true }
    }
  },
  'set-plan': o => {
    const input = { organizationId: uuid('org', o.org), plan: oneOf<Plan>('plan', required('plan', o.plan), PLANS) as Plan, status: oneOf<SubscriptionStatus>('status', o.status, STATUSES), currentPeriodEnd: date('period-end', o['period-end']) }
    return async prisma => await setPlan(prisma, input)
  },
  'verify-stats': o => {
    const timeout = o.timeout === undefined ? undefined : Number(o.timeout)
    if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) throw new UsageError('--timeout must be a positive number of seconds')
    const progress = ({ jobsChecked, jobsTotal, drifted, seconds }: { jobsChecked: number, jobsTotal: number, drifted: number, seconds: number }): void => {
      console.error(`verify-stats: ${jobsChecked}/${jobsTotal} jobs checked, ${drifted} differ, ${seconds.toFixed(1)} s`)
    }
    return async prisma => {
      const result = await verifyScreenStats(prisma, { fix: o.fix === 'true', onProgress: progress, ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}) })
      if (hasDrift(result.drift)) process.exitCode = 1
      return result
    }
  },
  'fold-stats': () => async prisma => ({ folded: await foldScreenStats(prisma) }),
  'expire-sync-tokens': () => async prisma => await expireSyncTokens(clientReader(prisma)),
  'list-endpoints': o => {
    const org = o.org === undefined ? undefined : uuid('org', o.org)
    return async (_prisma, database) => await listEndpoints(database, org)
  },
  'disable-endpoint': o => {
    const id = uuid('id', o.id)
    return async (_prisma, database) => {
      if (!await setEndpointStatus(database, id, false)) throw new Error('No endpoint matched.')
      return { id, status: 'disabled', disabled_reason: 'operator' }
    }
  },
  'enable-endpoint': o => {
    const id = uuid('id', o.id)
    return async (_prisma, database) => {
      if (!await setEndpointStatus(database, id, true)) throw new Error('No endpoint matched.')
      return { id, status: 'enabled' }
    }
  },
  'recover-endpoint': o => {
    const id = uuid('id', o.id)
    const since = date('since', required('since', o.since))
    if (since === null || since === undefined) throw new UsageError('--since must be an ISO 8601 date')
    return async (_prisma, database, config) => {
      const scheduled = await recoverEndpoint(database, config, id, since)
      if (scheduled === null) throw new Error('No endpoint matched.')
      return { id, ...scheduled }
    }
  },
}

async function main (): Promise<number> {
  let run: ReturnType<Command>
  try {
    const parsed = parseArgs({
      allowPositionals: true,
      strict: true,
      options: {
        ...Object.fromEntries(['name', 'plan', 'status', 'period-end', 'org', 'email', 'user', 'expires', 'prefix', 'id', 'scopes', 'since'].map(n => [n, { type: 'string' as const }])),
        timeout: { type: 'string' as const },
        fix: { type: 'boolean' as const },
      },
    })
    const command = parsed.positionals[0]
    if (parsed.positionals.length !== 1 || command === undefined || !(command in commands)) throw new UsageError(command === undefined ? 'a command is required' : `unknown command: ${parsed.positionals.join(' ')}`)
    // Flags (--fix) become 'true', so that every command reads strings.
    run = commands[command]!(Object.fromEntries(Object.entries(parsed.values).map(([k, v]) => [k, typeof v === 'boolean' ? String(v) : v])))
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`)
    return 2
  }
  const [{ ConfigError, loadConfig }, { openDatabase }] = await Promise.all([import('../src/config.js'), import('../src/db/open-database.js')])
  let config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) { console.error(error.message); return 1 }
    throw error
  }
  // Without the service's time limits: a command on a large database takes longer than a
  // request may (verify-stats has its own --timeout).
  // Beside a running service on the embedded database, through its socket (src/db/door.ts).
  const db = await openDatabase({ ...config, DB_QUERY_TIMEOUT_MS: 0, DB_STATEMENT_TIMEOUT_MS: 0 }, { beside: 'door' })
  if (db.throughDoor !== undefined) console.error(`(on the database of the service running on DATA_DIR${db.throughDoor.owner !== undefined ? `, process ${db.throughDoor.owner.pid}` : ''}, through its socket)`)
  try {
    const result = await run(db.prisma, db, config)
    console.log(JSON.stringify(result, (_k, v: unknown) => typeof v === 'bigint' ? v.toString() : v, 2))
    return typeof process.exitCode === 'number' ? process.exitCode : 0
  } catch (error) {
    console.error(`error: ${(error as Error).message.split('\n').filter(Boolean).slice(-1)[0] ?? 'failed'}`)
    return 1
  } finally {
    await db.close()
  }
}

main().then(code => { process.exitCode = code }, (error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
