import net from 'node:net'

// No test connects off this machine (DEVELOPERS.md): every TCP connection a test process
// opens is to a loopback address (or a Unix socket); one to any other address or name is
// refused before it is made, and remembered, so that the app's test teardown fails
// (buildTestApp) even where the app itself would only record a failed attempt.

export const refusedConnections: string[] = []

const LOOPBACK = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i

type Connect = (this: net.Socket, ...args: unknown[]) => net.Socket
const connect = net.Socket.prototype.connect as unknown as Connect
net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]): net.Socket {
  // net.connect() hands its arguments on normalized: [options, callback].
  const first = Array.isArray(args[0]) ? args[0][0] : args[0]
  const options = typeof first === 'object' && first !== null ? first as { host?: string, path?: string } : typeof first === 'number' ? { host: typeof args[1] === 'string' ? args[1] : undefined } : { path: String(first) }
  const host = options.path === undefined ? (options.host ?? 'localhost').replace(/^\[(.*)\]$/, '$1') : undefined
  if (host !== undefined && !LOOPBACK.test(host)) {
    refusedConnections.push(host)
    throw new Error(`a test tried to connect to ${host}: tests connect to loopback addresses only`)
  }
  return connect.apply(this, args)
} as unknown as typeof net.Socket.prototype.connect
