import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startServer } from '../helpers/server-process.js'
import { within } from '../helpers/until.js'

// A newcomer sees a webhook fire on the embedded default (issue 55, finding 12), as the
// README tells it ("Try every feature on the embedded database"): the service started with
// WEBHOOK_ALLOWED_NETWORKS for a local receiver, `npm run demo -- receive` (which registers
// itself and gets the test event), then `npm run demo -- complete-screen` beside the running
// service, and the signed event arrives.
// Timed, each step and the whole.

t.test('the loop: start, receive (the test event), complete a screen, the signed job.updated arrives', async t => {
  const started = performance.now()
  const dataDir = mkdtempSync(join(tmpdir(), 'screening-loop-'))
  const server = await startServer(t, { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' }, { dataDir })
  const up = performance.now()
  t.match(server.output(), /Webhooks: +npm run demo -- receive/, 'the banner names the demo receiver')

  // Its own process group: npm, tsx and the receiver stop together.
  const receiver = spawn('npm', ['run', '-s', 'demo', '--', 'receive', '--port', '0', '--api', server.baseUrl], { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let out = ''
  receiver.stdout.on('data', (c: Buffer) => { out += c.toString() })
  receiver.stderr.on('data', (c: Buffer) => { out += c.toString() })
  t.teardown(() => { try { process.kill(-receiver.pid!, 'SIGKILL') } catch {} })
  const waitFor = async (pattern: RegExp, ms = 60_000): Promise<void> => {
    await within(() => pattern.test(out) || receiver.exitCode !== null, ms, 20)
    if (!pattern.test(out)) throw new Error(`waited for ${pattern}:\n${out}`)
  }
  await waitFor(/received webhook\.test \S+ +signature verified/)
  await waitFor(/test event: delivered \(204/)
  t.pass('the test event: received and verified by the receiver, and delivered, the service answered')
  const tested = performance.now()

  const { DATABASE_URL: _, ...inherited } = process.env
  const change = spawnSync('npm', ['run', '-s', 'demo', '--', 'complete-screen'], { env: { ...inherited, DATA_DIR: dataDir }, encoding: 'utf8' })
  t.equal(change.status, 0, change.stderr)
  t.match(change.stdout, /a screen (taken and )?completed, score [\d.]+, on the running service's database/, 'written beside the running service')
  const changed = performance.now()
  await waitFor(new RegExp(`received job\\.updated ${server.sampleJobId} +signature verified`), 10_000)
  const told = performance.now()
  t.notMatch(out, /NOT VERIFIED/, 'every event verified')
  const ms = (a: number, b: number): number => Math.round(b - a)
  t.comment(`figures: newcomer's webhook loop: npm start ${ms(started, up)} ms, receive and its test event ${ms(up, tested)} ms, complete-screen ${ms(tested, changed)} ms, the event received ${ms(changed, told)} ms after; ${ms(started, told)} ms in all`)

  // npm may exit first: the receiver, in its group, says what it did on its own.
  process.kill(-receiver.pid!, 'SIGTERM')
  await within(() => /endpoint \S+ deleted/.test(out), 10_000, 20)
  t.match(out, /endpoint \S+ deleted/, 'Ctrl-C deletes its endpoint')
})
