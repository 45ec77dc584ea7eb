import { Server as NetServer } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { shuttingDown } from '../errors.js'

const DRAIN_MS = 2000

/**
 * Draining on close, before Fastify closes the server. http.Server#close cuts idle
 * keep-alive connections at once, racing clients that are writing their next request on
 * them (they see ECONNRESET). So first stop accepting with net.Server#close, which leaves
 * open connections alone; answer on them with `Connection: close`, so each closes after its
 * next response and the client reconnects to a refusing port; wait for them, at most 2 s.
 * Requests arriving meanwhile get a 503 in the shared error shape (Fastify's own
 * return503OnClosing writes a body of its own, without code or request id).
 */
export default fp(async function drainingPlugin (app: FastifyInstance) {
  let closing = false
  app.addHook('onRequest', async () => {
    if (closing) throw shuttingDown()
  })
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
  })
}, { name: 'draining' })
