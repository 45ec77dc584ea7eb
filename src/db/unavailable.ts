// Which database errors mean "the database cannot answer now" (a 503 the client may retry),
// as opposed to a bug (a 500). Prisma wraps driver errors in several layers; walk them all.

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
