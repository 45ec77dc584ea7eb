// The framework ceiling: Fastify with one GET route answering a small constant JSON, no
// logger, no plugins, no database. No service built on Fastify answers faster than this on
// the same machine. Started with `node --import tsx` (tsx costs at load time only).
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get('/ceiling', async () => ({ ok: true, service: 'ceiling' }))
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 3000) })

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { void app.close() })
