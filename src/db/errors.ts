// What a database error means, in one place: "the database cannot answer now" (a 503 the
// client may retry) as opposed to a bug (a 500); and, for a read on a replica, whether it is
// worth running on another replica or the primary. Prisma wraps driver errors in several
// layers; each check walks them all.

const PRISMA_CODES = new Set([
  'P1001', // can't reach database server
  'P1002', // server reached, timed out
  'P1008', // operations timed out
  'P1017', // server closed the connection
  'P2024', // timed out fetching a connection from the pool
  'P2037', // too many database connections opened
])

const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections', 'TlsConnectionError'])

// SQLSTATE classes 08 (connection exception) and 53 (insufficient resources), query
// cancelled (statement_timeout), admin/crash shutdown, cannot connect now.
const SQLSTATE = /^(08|53)|^(57014|57P01|57P02|57P03)$/

const MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|ECONNREFUSED|ECONNRESET|ETIMEDOUT|Client has encountered a connection error|Can't reach database server|Connection closed|connection is closed/i

export function isDatabaseUnavailable (error: unknown, depth = 0): boolean {
  if (error === null || typeof error !== 'object' || depth > 6) return false
  const e = error as { code?: unknown, kind?: unknown, message?: unknown, cause?: unknown, meta?: { driverAdapterError?: unknown } }
  if (typeof e.code === 'string' && (PRISMA_CODES.has(e.code) || SQLSTATE.test(e.code))) return true
  if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true
  if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true
  return isDatabaseUnavailable(e.meta?.driverAdapterError, depth + 1) || isDatabaseUnavailable(e.cause, depth + 1)
}

/**
 * A replica connection refused as it opened, because its server is not known to belong to
 * the primary's cluster: the read (or check) that needed it fails, and is run elsewhere.
 */
export class ReplicaIdentityError extends Error {
  constructor (readonly reason: 'other_cluster' | 'other_database' | 'unverified', message: string) {
    super(message)
    this.name = 'ReplicaIdentityError'
  }
}

/** The ReplicaIdentityError behind a failed read, however the driver adapter wrapped it. */
export function identityError (error: unknown, depth = 0): ReplicaIdentityError | undefined {
  if (error instanceof ReplicaIdentityError) return error
  if (error === null || typeof error !== 'object' || depth > 6) return undefined
  const e = error as { cause?: unknown, meta?: { driverAdapterError?: unknown } }
  return identityError(e.meta?.driverAdapterError, depth + 1) ?? identityError(e.cause, depth + 1)
}

// SQLSTATE 40001 on a standby: a query cancelled because it conflicted with WAL replay. The
// driver adapters report it as kind TransactionWriteConflict with the SQLSTATE in
// `originalCode` (other SQLSTATEs: kind postgres, `code`).
const sqlState = (error: unknown): string | undefined => {
  const cause = (error as { meta?: { driverAdapterError?: { cause?: { code?: string, originalCode?: string } } } })?.meta?.driverAdapterError?.cause
  return cause?.originalCode ?? cause?.code
}

/**
 * Thrown by a read that found its database without what it needs and that the primary has (a
 * replica that has not replayed it yet): the read is run on the next replica or the primary.
 */
export class ReadElsewhere extends Error {}

/** A REPEATABLE READ or SERIALIZABLE transaction that lost to a concurrent one (40001): worth running again. */
export const serializationFailure = (error: unknown): boolean => sqlState(error) === '40001'

/** Whether a read that failed on a replica is worth running elsewhere. */
export const replicaFailed = (error: unknown): boolean => error instanceof ReadElsewhere || isDatabaseUnavailable(error) || sqlState(error) === '40001' || identityError(error) !== undefined
