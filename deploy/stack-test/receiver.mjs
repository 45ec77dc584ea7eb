// The stack test's webhook receiver, a service of compose.test.yml on the node:24-slim image
// (no dependency: node:http and node:crypto). It records every delivery POSTed to it: its
// webhook-id, type, job id, webhook-timestamp and time of receipt, after checking the
// signature per Standard Webhooks with the endpoint's secret, which run.sh gives it once the
// endpoint exists (PUT /secret). Until then it answers 503, which the API retries.
//   POST /hooks          a delivery: 204, 401 (bad signature, recorded as such) or 503
//   PUT /secret          the endpoint's whsec_ secret (from the host, on the published port)
//   GET /deliveries?from=N   the records from the Nth on, and the counts
//   PUT /hold?ms=N       hold each delivery N ms before answering (0: none), and
//   GET /inflight        the deliveries held now, with the sender's address: run.sh kills
//                        the instance delivering, mid-delivery. A delivery whose sender
//                        closes the connection while held is not recorded (never answered).
// The first attempt of one webhook-id in REFUSE_EVERY (by a hash of it) is answered 503, so
// that the API's retries (WEBHOOK_RETRY_DELAYS) are exercised too, not only the first send.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import http from 'node:http'

const port = Number(process.env.PORT ?? 8080)
const refuseEvery = Number(process.env.REFUSE_EVERY ?? 0)
// Standard Webhooks' tolerance: a timestamp further than this from now is refused (a replay).
const toleranceS = 300

let key
let holdMs = 0
const held = new Map()
const records = []
const counts = { received: 0, verified: 0, badSignature: 0, refusedOnPurpose: 0, beforeSecret: 0, abandoned: 0 }
const refusedOnce = new Set()

const read = request => new Promise((resolve, reject) => {
  const chunks = []
  let size = 0
  request.on('data', chunk => {
    size += chunk.length
    if (size > 1 << 20) { request.destroy(); reject(new Error('body too large')) } else chunks.push(chunk)
  })
  request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
  request.on('error', reject)
})

/** Why the delivery's signature does not verify, or undefined when one of its `v1,` signatures does. */
function signatureProblem (headers, body, now) {
  const id = headers['webhook-id']
  const timestamp = headers['webhook-timestamp']
  const signatures = headers['webhook-signature']
  if (!id || !timestamp || !signatures) return 'missing webhook-id, webhook-timestamp or webhook-signature'
  if (!/^\d+$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > toleranceS) return `timestamp ${timestamp} outside ${toleranceS} s of now`
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest()
  const match = signatures.split(' ').some(signature => {
    const [version, value] = signature.split(',')
    const given = Buffer.from(value ?? '', 'base64')
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected)
  })
  return match ? undefined : 'no v1 signature matches'
}

const server = http.createServer(async (request, response) => {
  const url = new URL(request.url, 'http://receiver')
  const answer = (status, body) => {
    response.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' })
    response.end(body === undefined ? undefined : JSON.stringify(body))
  }
  try {
    if (request.method === 'PUT' && url.pathname === '/secret') {
      const secret = (await read(request)).trim()
      if (!secret.startsWith('whsec_')) return answer(400, { error: 'not a whsec_ secret' })
      key = Buffer.from(secret.slice('whsec_'.length), 'base64')
      return answer(204)
    }
    if (request.method === 'GET' && url.pathname === '/deliveries') {
      const from = Number(url.searchParams.get('from') ?? 0)
      return answer(200, { total: records.length, counts, records: records.slice(from) })
    }
    if (request.method === 'PUT' && url.pathname === '/hold') {
      holdMs = Number(url.searchParams.get('ms') ?? 0)
      return answer(204)
    }
    if (request.method === 'GET' && url.pathname === '/inflight') return answer(200, [...held.values()])
    if (request.method === 'GET' && url.pathname === '/health') return answer(200, { ok: true })
    if (request.method !== 'POST' || url.pathname !== '/hooks') return answer(404, { error: 'not found' })

    const body = await read(request)
    const receivedAt = Date.now()
    counts.received++
    if (key === undefined) { counts.beforeSecret++; return answer(503) }
    const id = request.headers['webhook-id']
    const problem = signatureProblem(request.headers, body, receivedAt)
    let event
    try { event = JSON.parse(body) } catch { event = {} }
    if (problem !== undefined) {
      counts.badSignature++
      records.push({ id, type: event.type, job: event.data?.id, receivedAt, timestamp: Number(request.headers['webhook-timestamp']), verified: false, problem })
      return answer(401, { error: problem })
    }
    counts.verified++
    if (refuseEvery > 0 && !refusedOnce.has(id) && createHash('sha256').update(id).digest().readUInt32BE(0) % refuseEvery === 0) {
      refusedOnce.add(id)
      counts.refusedOnPurpose++
      return answer(503)
    }
    if (holdMs > 0) {
      const token = Symbol(id)
      held.set(token, { id, address: request.socket.remoteAddress?.replace(/^::ffff:/, ''), since: receivedAt })
      // The sender gone (killed) while we held it: it never got an answer, so it is not a
      // delivery; pg-boss must make it again from another instance.
      const closed = await new Promise(resolve => {
        const timer = setTimeout(() => resolve(false), holdMs)
        response.once('close', () => { clearTimeout(timer); resolve(!response.writableFinished) })
      })
      held.delete(token)
      if (closed) { counts.abandoned++; return }
    }
    records.push({ id, type: event.type, job: event.data?.id, receivedAt, timestamp: Number(request.headers['webhook-timestamp']), verified: true })
    return answer(204)
  } catch (error) {
    return answer(500, { error: String(error) })
  }
})

server.listen(port, '0.0.0.0', () => { console.log(`webhook receiver on :${port} (first attempt refused for 1 id in ${refuseEvery || 'none'})`) })
// PID 1 in its container: without a handler SIGTERM would be ignored until Docker's SIGKILL.
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => { server.close(); process.exit(0) })
