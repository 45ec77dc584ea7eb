// The hand-written baseline: node:http and a pg.Pool, the service's three read routes with
// byte-identical bodies and the same credential, plan and organization checks, and the
// best SQL we can write (./queries.ts). What the service could be with no framework, ORM
// or plugins. Configured like the service: PORT, HOST, DATABASE_URL, DB_POOL_MAX,
// CURSOR_SECRET, UPGRADE_URL. Started with `node --import tsx`: tsx costs at load time only.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import pg from 'pg'
import { Cursors } from './cursor.js'
import { Handlers } from './handlers.js'
import { Queries } from './queries.js'
import { sendError } from './reply.js'

const env = process.env
if (env.DATABASE_URL === undefined || env.CURSOR_SECRET === undefined) {
  console.error('baseline: DATABASE_URL and CURSOR_SECRET are required')
  process.exit(2)
}
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DB_POOL_MAX ?? 10), application_name: 'bench-baseline' })
const handlers = new Handlers(new Queries(pool), new Cursors(env.CURSOR_SECRET), env.UPGRADE_URL ?? '/dashboard/billing')

const JOB = /^\/api\/jobs\/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(\/analytics)?\/?$/

async function route (req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/'
  const q = url.indexOf('?')
  const path = q < 0 ? url : url.slice(0, q)
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1))
  if (path === '/health/ready') {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{"status":"ok"}')
    return
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 404, 'Not found')
  const jobPath = JOB.exec(path)
  const isList = path === '/api/jobs' || path === '/api/jobs/'
  if (jobPath === null && !isList) return sendError(res, 404, 'Not found')
  const caller = await handlers.caller(req, res)
  if (caller === undefined) return
  if (isList) return await handlers.list(req, res, caller, query)
  const jobId = jobPath![1]!.toLowerCase()
  if (jobPath![2] !== undefined) return await handlers.analytics(req, res, caller, jobId, query)
  return await handlers.job(req, res, caller, jobId)
}

const server = createServer((req, res) => {
  route(req, res).catch((error: unknown) => {
    console.error('baseline:', error)
    if (!res.headersSent) sendError(res, 500, 'Internal server error')
  })
})
server.listen(Number(env.PORT ?? 3000), env.HOST ?? '127.0.0.1')

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => { server.close(); server.closeAllConnections(); void pool.end() })
}
