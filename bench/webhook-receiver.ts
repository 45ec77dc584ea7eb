// The webhooks bench's receiver, a process of its own (bench/webhooks.ts): answers every
// delivery 204 at once and appends `endpoint<TAB>job id<TAB>receipt time (ms)` to the file its
// argument names, flushed on SIGTERM. Its port on stdout once it listens.
import { createWriteStream } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const out = createWriteStream(process.argv[2]!)
let lines: string[] = []
const flush = (): void => { if (lines.length > 0) { out.write(lines.join('')); lines = [] } }
setInterval(flush, 200).unref()
const server = createServer((request, response) => {
  let body = ''
  request.on('data', (chunk: Buffer) => { body += chunk.toString() })
  request.on('end', () => {
    const at = Date.now()
    const id = /"id":"([0-9a-f-]{36})"/.exec(body)?.[1] ?? ''
    lines.push(`${request.url!.slice(1)}\t${id}\t${at}\n`)
    response.writeHead(204).end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => { process.stdout.write(`${(server.address() as AddressInfo).port}\n`) })
process.on('SIGTERM', () => { flush(); out.end(() => { process.exit(0) }) })
