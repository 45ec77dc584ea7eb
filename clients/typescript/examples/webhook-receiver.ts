// A webhook receiver that keeps a copy of the organization's jobs: every job at start, then
// each event as it comes. Events name a job and arrive at least once, in no set order, so it
// ignores a webhook-id it has handled and reads the job as it is now rather than trusting order.
import { createServer } from 'node:http'
import { createScreeningClient, ScreeningApiError, verifyWebhook, WebhookVerificationError, type Job, type WebhookEvent } from '@screening/read-api'

const api = createScreeningClient({ baseUrl: process.env.SCREENING_API_URL!, apiKey: process.env.SCREENING_API_KEY! })
// The endpoint's secret; during a rotation's grace, the new and the previous, comma-separated.
const secrets = process.env.WEBHOOK_SECRET!.split(',')

const jobs = new Map<string, Job>()
const handled = new Set<string>() // in production: a table with a unique key, kept for some days

async function walkAll (): Promise<void> {
  jobs.clear()
  for await (const job of api.listAllJobs({ limit: 100 })) jobs.set(job.id, job)
}

async function apply (event: WebhookEvent): Promise<string> {
  const id = event.data.id
  if (event.type === 'sync.reset') { await walkAll(); return `walked again: ${jobs.size} jobs` }
  if (event.type === 'job.deleted') { jobs.delete(id); return `${id} removed` }
  try {
    const job = await api.getJob(id)
    jobs.set(id, job)
    return `${id} is now "${job.title}", ${job.interview_count} screens`
  } catch (error) {
    // Deleted since the event was sent: its job.deleted may come before or after this one.
    if (!(error instanceof ScreeningApiError) || error.code !== 'not_found') throw error
    jobs.delete(id)
    return `${id} is gone`
  }
}

await walkAll()
const server = createServer(async (request, response) => {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  try {
    const event = await verifyWebhook(secrets, request.headers, Buffer.concat(chunks))
    const webhookId = String(request.headers['webhook-id'])
    // Marked once applied: an event that failed is answered 500 and comes again.
    if (!handled.has(webhookId)) {
      console.log(`${event.type}: ${await apply(event)}; ${jobs.size} jobs`)
      handled.add(webhookId)
    }
    response.writeHead(204).end()
  } catch (error) {
    if (error instanceof WebhookVerificationError) console.log(`refused: ${error.reason}`)
    else console.error(error)
    response.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end()
  }
})
// Behind the HTTPS proxy the endpoint's URL names.
server.listen(Number(process.env.PORT ?? 8080), '127.0.0.1', () => { console.log(`listening, ${jobs.size} jobs`) })
