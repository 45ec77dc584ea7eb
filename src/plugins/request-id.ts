import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

// A caller's id is reused only when it is short and printable, so it cannot forge log
// lines or bloat them.
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function requestId (req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID()
}

export default fp(async function requestIdPlugin (app: FastifyInstance) {
  // onSend runs for every reply, errors and 404s included.
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
}, { name: 'request-id' })
