import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { within } from './until.js'

// A partner's webhook receiver on 127.0.0.1, verifying every delivery with the
// `standardwebhooks` package (the specification's own library, independent of the service's
// signing code) against the secrets it is given. What it answers can be set per request.

export interface Received {
  id: string
  type: string
  jobId: string
  at: number
  verified: boolean
  attempt: number
  body: string
  headers: IncomingHttpHeaders
}

export interface Receiver {
  url: string
  received: Received[]
  /** Secrets the deliveries must verify with (any of them). */
  secrets: string[]
  /** The status to answer (and headers), per request; 204 by default. */
  answer: (request: { id: string, count: number }) => { status: number, headers?: Record<string, string>, delayMs?: number }
  connections: number
  close: () => Promise<void>
  /** Waits until `predicate` holds of what was received, or `ms` pass. */
  until: (predicate: (received: Received[]) => boolean, ms?: number) => Promise<boolean>
}

export async function startReceiver (path = '/hooks'): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    secrets: [],
    answer: () => ({ status: 204 }),
    connections: 0,
    close: async () => { await new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => { resolve() }) }) },
    until: async (predicate, ms = 10_000) => await within(() => predicate(receiver.received), ms, 20),
  }
  const counts = new Map<string, number>()
  const server: Server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => { body += chunk.toString() })
    request.on('end', () => {
      const id = String(request.headers['webhook-id'])
      const count = (counts.get(id) ?? 0) + 1
      counts.set(id, count)
      const verified = receiver.secrets.some(secret => {
        try { new Webhook(secret).verify(body, request.headers as Record<string, string>); return true } catch { return false }
      })
      let parsed: { type?: string, data?: { id?: string } } = {}
      try { parsed = JSON.parse(body) } catch {}
      receiver.received.push({ id, type: parsed.type ?? '', jobId: parsed.data?.id ?? '', at: Date.now(), verified, attempt: count, body, headers: request.headers })
      const { status, headers = {}, delayMs = 0 } = receiver.answer({ id, count })
      // Unref'd: a delivery held open (a slow endpoint) keeps no test process alive.
      setTimeout(() => { if (!response.destroyed) response.writeHead(status, headers).end() }, delayMs).unref()
    })
  })
  server.on('connection', () => { receiver.connections++ })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  return receiver
}
