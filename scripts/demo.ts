// npm run demo -- <command>: see a webhook fire on the embedded default, beside `npm start`
// (README, "Try every feature on the embedded database"). `receive` is a partner's receiver
// on 127.0.0.1 that registers itself with the Pro demo key, asks for the test event and
// prints every event it gets, verified with the `standardwebhooks` package; `complete-screen`
// and `rename-job` change a demo job as the recruiters' app would, on the service's database
// (through its socket when it runs: src/db/door.ts).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { Webhook } from 'standardwebhooks'
import { onStopSignals } from '../src/stop-signals.js'

const USAGE = `usage: npm run demo -- <command> [options]

  receive          [--port 4000] [--api http://127.0.0.1:3000] [--key <api key>]
                   a webhook receiver on 127.0.0.1, registered with the service (the Pro demo
                   key by default), sent the test event; prints each event, verified. Ctrl-C
                   deletes its endpoint. The service must allow it: WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8
  complete-screen  [--job <job id>]   a candidate completes a screen of the job (the banner's by default)
  rename-job       --title <title> [--job <job id>]   a recruiter retitles it`

const { positionals, values } = parseArgs({ allowPositionals: true, options: { port: { type: 'string' }, api: { type: 'string' }, key: { type: 'string' }, job: { type: 'string' }, title: { type: 'string' } } })
const command = positionals[0]

async function receive (): Promise<void> {
  const { demoData } = await import('../src/demo/seed.js')
  const api = values.api ?? process.env.BASE_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`
  const key = values.key ?? demoData().credentials.find(c => c.plan === 'pro' && c.scopes === undefined)!.key
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  let secret = ''
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => { body += chunk.toString() })
    request.on('end', () => {
      let verified = false
      try { new Webhook(secret).verify(body, request.headers as Record<string, string>); verified = true } catch {}
      const event = JSON.parse(body) as { type: string, data: { id: string } }
      console.log(`${new Date().toISOString()}  received ${event.type} ${event.data.id}  ${verified ? 'signature verified' : 'SIGNATURE NOT VERIFIED'} (webhook-id ${String(request.headers['webhook-id'])})`)
      response.writeHead(verified ? 204 : 400).end()
    })
  })
  await new Promise<void>(resolve => { server.listen(Number(values.port ?? 4000), '127.0.0.1', resolve) })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  console.log(`listening on ${url}`)
  const made = await fetch(`${api}/api/webhook_endpoints`, { method: 'POST', headers, body: JSON.stringify({ url, description: 'npm run demo -- receive' }) })
  const endpoint = await made.json() as { id: string, secret: string, error?: string }
  if (made.status !== 201) {
    console.error(`the service refused the endpoint (${made.status}): ${endpoint.error ?? ''}`)
    if (made.status === 400) console.error('A local receiver needs the service started with WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8 npm start')
    server.close()
    process.exitCode = 1
    return
  }
  secret = endpoint.secret
  console.log(`endpoint ${endpoint.id} registered at ${api}; its signing secret ${secret}`)
  const stop = async (): Promise<void> => {
    const deleted = await fetch(`${api}/api/webhook_endpoints/${endpoint.id}`, { method: 'DELETE', headers: { authorization: headers.authorization }, signal: AbortSignal.timeout(5_000) })
      .then(res => res.status === 204 ? 'deleted' : `not deleted (${res.status})`, (error: unknown) => `not deleted (${(error as Error).message})`)
    console.log(`endpoint ${endpoint.id} ${deleted}`)
    process.exit(0)
  }
  // The server's stop-signals.ts says why: one Ctrl-C arrives two or three times under npm.
  onStopSignals(() => { void stop() })
  const test = await (await fetch(`${api}/api/webhook_endpoints/${endpoint.id}/test`, { method: 'POST', headers, body: '{}' })).json() as { delivered: boolean, status_code: number | null, error: string | null, duration_ms: number }
  console.log(`test event: ${test.delivered ? `delivered (${test.status_code}, ${test.duration_ms} ms)` : `not delivered: ${test.error}`}`)
  console.log('waiting for events: in another terminal, npm run demo -- complete-screen')
}

async function change (): Promise<void> {
  const [{ loadConfig }, { openDatabase }, { completeScreen, renameJob }] = await Promise.all([import('../src/config.js'), import('../src/db/open-database.js'), import('../src/demo/recruiter.js')])
  if (command === 'rename-job' && values.title === undefined) throw new Error(`--title is required\n\n${USAGE}`)
  const db = await openDatabase(loadConfig(), { beside: 'door' })
  try {
    const done = command === 'complete-screen' ? await completeScreen(db.primary, values.job) : await renameJob(db.primary, values.title!, values.job)
    console.log(`${done.title} (${done.jobId}): ${done.did}${db.throughDoor !== undefined ? ', on the running service\'s database' : ''}. Its endpoints are told within a second.`)
  } finally {
    await db.close()
  }
}

const commands: Record<string, () => Promise<void>> = { receive, 'complete-screen': change, 'rename-job': change }
if (command === undefined || commands[command] === undefined || positionals.length !== 1) {
  console.error(`${command === undefined ? 'a command is required' : `unknown command: ${positionals.join(' ')}`}\n\n${USAGE}`)
  process.exitCode = 2
} else {
  await commands[command]!().catch((error: unknown) => { console.error(`error: ${(error as Error).message}`); process.exitCode = 1 })
}
