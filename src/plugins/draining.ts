import { Server as NetServer, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    /** True from the moment the instance starts closing: readiness fails at once. */
    draining: () => boolean
  }
}

/**
 * How long open connections are served after SIGTERM before the idle ones are cut. Longer
 * than the proxy's active health check needs to take the instance out of rotation
 * (deploy/proxy/Caddyfile: every 1 s, 1 s timeout), so that by then nothing routes here and
 * cutting an idle pooled connection races no request; short enough that a stop stays far
 * below close-with-grace's 10 s and Compose's stop_grace_period of 15 s.
 */
export const DRAIN_MS = 3000

/**
 * Draining on close, before Fastify closes the server. http.Server#close cuts idle
 * keep-alive connections at once, racing clients (and proxies' connection pools) that are
 * writing their next request on them. So first stop accepting with net.Server#close, which
 * leaves open connections alone, and fail readiness so that health checks take the instance
 * out of rotation. Whatever still arrives on an open connection was sent by a client that
 * had not yet heard: it is answered as usual, with `Connection: close`, so each connection
 * closes after its next response and its client reconnects elsewhere (Fastify's router adds
 * the header while closing; the hook makes it explicit). Wait for the connections to close,
 * at most DRAIN_MS; then Fastify cuts the idle ones and waits for requests in flight.
 */
export default fp(async function drainingPlugin (app: FastifyInstance) {
  let closing = false
  const connections = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket)
    socket.once('close', () => { connections.delete(socket) })
  })
  app.decorate('draining', () => closing)
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close')
  })
  app.addHook('preClose', async () => {
    closing = true
    if (!app.server.listening) return
    NetServer.prototype.close.call(app.server)
    const deadline = Date.now() + DRAIN_MS
    let open = 1
    while (open > 0 && Date.now() < deadline) {
      await new Promise(resolve => setTimeout(resolve, 50))
      open = await new Promise<number>(resolve => { app.server.getConnections((_err, count) => { resolve(count) }) })
    }
    // A connection on which nothing was ever sent (undici opens a spare one when a response
    // body is dropped unread; browsers preconnect) is not idle to Node: it counts as a request
    // under way from its first moment, and once the server closes nothing applies the headers
    // timeout to it any more. Fastify's close would wait for its client, until close-with-grace
    // forced the exit at 10 s. It has nothing to be answered: cut it with the idle ones.
    for (const socket of connections) if (socket.bytesRead === 0) socket.destroy()
  })
}, { name: 'draining' })
