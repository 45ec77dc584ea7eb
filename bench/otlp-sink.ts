// The tracing bench's OTLP receiver, a process of its own (bench/tracing.ts): answers every
// export 200 with an empty ExportTraceServiceResponse, counts the exports and their bytes
// (GET /stats). Decoding is the test's job (test/helpers/otlp-receiver.ts), not a cost here.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const stats = { exports: 0, bytes: 0 }
const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/stats') {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats))
    return
  }
  request.on('data', (chunk: Buffer) => { stats.bytes += chunk.length })
  request.on('end', () => {
    stats.exports++
    response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/x-protobuf' }).end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => { process.stdout.write(`${(server.address() as AddressInfo).port}\n`) })
process.on('SIGTERM', () => { server.close(); process.exit(0) })
