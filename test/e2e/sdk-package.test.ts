import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Webhook } from 'standardwebhooks'
import t, { type Test } from 'tap'
import { freePort } from '../helpers/ports.js'
import { startServer } from '../helpers/server-process.js'
import { within } from '../helpers/until.js'

// The SDK as a partner gets it: built, packed with npm pack, installed from the tarball into
// a project outside the repository, compiled there with tsc against the installed package,
// and run against the real server with its demo data. What runs: e2e/partner-program.ts
// (every operation, pagination, typed errors, polling, retries), every TypeScript example of
// the package's README, and the before/after examples. The webhook receivers (of the README
// and examples/) run as servers, sent deliveries signed by the `standardwebhooks` package.

const root = resolve('.')
const sdk = join(root, 'clients/typescript')
const tsc = join(root, 'node_modules/typescript/bin/tsc')
const tmp = mkdtempSync(join(tmpdir(), 'screening-sdk-partner-'))
t.teardown(() => rmSync(tmp, { recursive: true, force: true }))

function run (command: string, args: string[], options: { cwd: string, env?: Record<string, string> }): { status: number | null, stdout: string, stderr: string } {
  const { DATABASE_URL: _, ...inherited } = process.env
  const res = spawnSync(command, args, { cwd: options.cwd, env: { ...inherited, ...options.env }, encoding: 'utf8', timeout: 180_000 })
  return { status: res.status, stdout: res.stdout, stderr: res.stderr }
}

function mustRun (t: Test, command: string, args: string[], options: { cwd: string, env?: Record<string, string> }): string {
  const res = run(command, args, options)
  if (res.status !== 0) t.fail(`${command} ${args.join(' ')} exited ${res.status}:\n${res.stdout}\n${res.stderr}`)
  return res.stdout
}

/** The ```ts blocks of a Markdown file. */
const snippets = (markdown: string): string[] => [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(m => m[1]!)

// Started first: the root test would end (and stop them) between awaited subtests otherwise.
// Webhook endpoints on 127.0.0.1 allowed; nothing listens at WEBHOOK_URL (nothing is sent to
// it: the demo data does not change).
const server = await startServer(t, { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' })
const limited = await startServer(t, { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '2' })
const WEBHOOK_URL = 'http://127.0.0.1:9/hooks'
const env = { SCREENING_API_URL: server.baseUrl, SCREENING_API_KEY: server.keys.pro, JOB_ID: server.sampleJobId, WEBHOOK_URL }

let tarball = ''
await t.test('npm pack: the built package, and only it', async t => {
  mustRun(t, process.execPath, [tsc, '-p', sdk], { cwd: sdk })
  const [pack] = JSON.parse(mustRun(t, 'npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: sdk })) as Array<{ filename: string, size: number, unpackedSize: number, files: Array<{ path: string, size: number }> }>
  const paths = pack!.files.map(f => f.path).sort()
  t.comment(`${pack!.filename}: ${pack!.size} bytes packed, ${pack!.unpackedSize} unpacked, ${paths.length} files:\n${pack!.files.map(f => `  ${f.path} ${f.size}`).join('\n')}`)
  for (const file of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/generated/sdk.gen.js']) t.ok(paths.includes(file), `${file} is in the tarball`)
  t.same(paths.filter(p => !p.startsWith('dist/') && p !== 'package.json' && p !== 'README.md'), [], 'no sources, examples or tests')
  const manifest = JSON.parse(readFileSync(join(sdk, 'package.json'), 'utf8')) as { name: string, version: string }
  const openapi = JSON.parse(readFileSync(join(root, 'openapi/openapi.json'), 'utf8')) as { info: { version: string } }
  t.equal(manifest.version, openapi.info.version, 'the package version is the document\'s info.version')
  t.equal(pack!.filename, `${manifest.name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`)
  tarball = join(tmp, pack!.filename)
})

const project = join(tmp, 'partner-project')
const examples = {
  program: readFileSync(join(sdk, 'e2e/partner-program.ts'), 'utf8'),
  readme: snippets(readFileSync(join(sdk, 'README.md'), 'utf8')),
  before: readFileSync(join(sdk, 'examples/all-analytics-before.ts'), 'utf8'),
  after: readFileSync(join(sdk, 'examples/all-analytics-after.ts'), 'utf8'),
  receiver: readFileSync(join(sdk, 'examples/webhook-receiver.ts'), 'utf8'),
  dashboard: readFileSync(join(sdk, 'examples/dashboard.ts'), 'utf8'),
}
/** A README example that is a server (a webhook receiver): run in the background, not to its end. */
const isServer = (code: string): boolean => code.includes('.listen(')

await t.test('a project outside the repository installs the tarball and compiles against it', async t => {
  mkdirSync(join(project, 'src'), { recursive: true })
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'partner-project', private: true, type: 'module' }, null, 2))
  mustRun(t, 'npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: project })
  t.same(readdirSync(join(project, 'node_modules/@screening/read-api')).sort(), ['README.md', 'dist', 'package.json'])
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      outDir: 'dist',
      rootDir: 'src',
      // Node's types from this repository: the project installs nothing but the tarball.
      typeRoots: [join(root, 'node_modules/@types')],
      types: ['node'],
    },
    include: ['src'],
  }, null, 2))
  writeFileSync(join(project, 'src/program.ts'), examples.program)
  examples.readme.forEach((code, i) => writeFileSync(join(project, `src/readme-${i + 1}.ts`), code))
  writeFileSync(join(project, 'src/before.ts'), examples.before)
  writeFileSync(join(project, 'src/after.ts'), examples.after)
  writeFileSync(join(project, 'src/receiver.ts'), examples.receiver)
  writeFileSync(join(project, 'src/dashboard.ts'), examples.dashboard)
  t.ok(examples.readme.length >= 7, `${examples.readme.length} README examples`)
  mustRun(t, process.execPath, [tsc, '-p', project], { cwd: project })
  t.ok(readdirSync(join(project, 'dist')).includes('program.js'), 'compiled')
})

t.test('the partner program: every operation, pages of 1, typed 403 and 404, a 304 from the cache, a 429 retried', async t => {
  const out = mustRun(t, process.execPath, ['dist/program.js'], {
    cwd: project,
    env: { API_URL: server.baseUrl, WEBHOOK_URL, PRO_KEY: server.keys.pro, FREE_KEY: server.keys.free, RESTRICTED_KEY: server.keys.restricted, JOB_ID: server.sampleJobId, LIMITED_URL: limited.baseUrl, LIMITED_KEY: limited.keys.pro },
  })
  t.comment(`program output:\n${out}`)
  t.match(out, /^all checks passed$/m)
})

t.test('the dashboard example: a page of jobs, then their analytics in one call, then the organization\'s, then its last weeks beside the weeks before', async t => {
  const out = mustRun(t, process.execPath, ['dist/dashboard.js'], { cwd: project, env })
  const lines = out.trim().split('\n')
  const period = lines.pop()
  const organization = lines.pop()
  t.ok(lines.length > 0 && lines.every(line => /: \d+% of \d+ screens completed; latest week (\d{4}-\d\d-\d\d|none), average /.test(line)), `one line per job:\n${out}`)
  t.match(organization, /^organization: \d+ active jobs, \d+% of \d+ screens completed, average score (\d+\.\d|-)$/, 'then the organization\'s line')
  t.match(period, /^last 28 days: \d+ completed \([+-]\d+ against the \d{4}-\d\d-\d\d\.\.\d{4}-\d\d-\d\d before\), average (\d+\.\d|-) \(([+-]\d+\.\d|no change to tell)\)$/, 'then its last 28 days (their weeks) beside the weeks before')
})

t.test('every TypeScript example of the README runs', async t => {
  examples.readme.forEach((code, i) => {
    if (isServer(code)) return
    const out = mustRun(t, process.execPath, [`dist/readme-${i + 1}.js`], { cwd: project, env })
    t.ok(out.trim().length > 0, `README example ${i + 1} printed:\n${out}`)
  })
})

interface Program {
  url: string
  lines: () => string[]
  /** Waits for a line printed (equal to `wanted`, or matching it) and returns it. */
  until: (wanted: string | RegExp) => Promise<string>
}

/** A compiled receiver, listening on a free port of 127.0.0.1 until the test ends. */
async function startProgram (t: Test, file: string, programEnv: Record<string, string>): Promise<Program> {
  const port = await freePort()
  const { DATABASE_URL: _, ...inherited } = process.env
  const child = spawn(process.execPath, [file], { cwd: project, env: { ...inherited, ...env, ...programEnv, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const exited = new Promise(resolve => child.once('exit', resolve))
  t.teardown(async () => { if (child.exitCode === null) { child.kill(); await exited } })
  const lines = (): string[] => out.split('\n').filter(line => line !== '')
  const until = async (wanted: string | RegExp): Promise<string> => {
    const find = (): string | undefined => lines().find(line => typeof wanted === 'string' ? line === wanted : wanted.test(line))
    await within(() => find() !== undefined || child.exitCode !== null, 30_000, 20)
    const line = find()
    if (line === undefined) throw new Error(`${file} did not print ${String(wanted)} (exit ${child.exitCode}):\n${out}`)
    return line
  }
  return { url: `http://127.0.0.1:${port}/hooks`, lines, until }
}

/** POSTs `event` to `url` as the service would, signed with `secrets` (the standardwebhooks package) at `at`; its status. */
async function deliver (url: string, event: Record<string, unknown>, options: { id: string, secrets: string[], at?: Date, body?: string }): Promise<number> {
  const body = JSON.stringify(event)
  const at = options.at ?? new Date()
  const signature = options.secrets.map(secret => new Webhook(secret).sign(options.id, at, body)).join(' ')
  const headers = { 'content-type': 'application/json', 'webhook-id': options.id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature }
  const res = await fetch(url, { method: 'POST', headers, body: options.body ?? body })
  await res.arrayBuffer()
  return res.status
}

const newSecret = (): string => 'whsec_' + randomBytes(32).toString('base64')
const event = (type: string, id: string): Record<string, unknown> => ({ type, timestamp: new Date().toISOString(), data: { id, ...(type === 'sync.reset' ? { reason: 'changes_may_have_been_missed' } : {}) } })

t.test('the README\'s webhook receiver: acts once on each verified webhook-id; 400 for a tampered body, another secret, a stale timestamp', async t => {
  const index = examples.readme.findIndex(isServer)
  t.ok(index >= 0, 'the README has a receiver')
  const secret = newSecret()
  const receiver = await startProgram(t, `dist/readme-${index + 1}.js`, { WEBHOOK_SECRET: secret })
  await receiver.until('listening')
  const jobId = server.sampleJobId
  t.equal(await deliver(receiver.url, event('job.updated', jobId), { id: 'msg_1', secrets: [secret] }), 204)
  t.equal(await deliver(receiver.url, event('job.updated', jobId), { id: 'msg_1', secrets: [secret] }), 204, 'a retry: answered')
  t.equal(await deliver(receiver.url, event('job.updated', jobId), { id: 'msg_2', secrets: [secret], body: JSON.stringify(event('job.deleted', jobId)) }), 400, 'a body other than the one signed')
  t.equal(await deliver(receiver.url, event('job.updated', jobId), { id: 'msg_3', secrets: [newSecret()] }), 400, 'signed with another secret')
  t.equal(await deliver(receiver.url, event('job.updated', jobId), { id: 'msg_4', secrets: [secret], at: new Date(Date.now() - 6 * 60_000) }), 400, 'signed 6 minutes ago')
  t.equal(await deliver(receiver.url, event('job.deleted', jobId), { id: 'msg_5', secrets: [secret] }), 204)
  await receiver.until(`job.deleted ${jobId}`)
  t.same(receiver.lines(), ['listening', `job.updated ${jobId}`, `job.deleted ${jobId}`], 'the retry and the refused deliveries acted on nothing')
})

t.test('examples/webhook-receiver.ts: a copy of the jobs kept from verified events, with both secrets of a rotation', async t => {
  const [next, previous] = [newSecret(), newSecret()]
  const receiver = await startProgram(t, 'dist/receiver.js', { WEBHOOK_SECRET: `${next},${previous}` })
  const count = Number(/^listening, (\d+) jobs$/.exec(await receiver.until(/^listening, \d+ jobs$/))![1])
  t.ok(count > 1, `every job of the demo organization walked at start (${count})`)
  const jobId = server.sampleJobId
  const missing = '00000000-0000-4000-8000-000000000000'
  t.equal(await deliver(receiver.url, event('job.updated', jobId), { id: 'msg_a', secrets: [next, previous] }), 204, 'signed by both, as during the grace')
  t.equal(await deliver(receiver.url, event('job.updated', jobId), { id: 'msg_a', secrets: [previous] }), 204, 'the same event again, by the previous secret only')
  t.equal(await deliver(receiver.url, event('job.deleted', jobId), { id: 'msg_b', secrets: [next] }), 204)
  t.equal(await deliver(receiver.url, event('job.updated', missing), { id: 'msg_c', secrets: [next] }), 204)
  t.equal(await deliver(receiver.url, event('job.deleted', jobId), { id: 'msg_d', secrets: [newSecret()] }), 400)
  t.equal(await deliver(receiver.url, event('sync.reset', 'endpoint'), { id: 'msg_e', secrets: [next] }), 204)
  const reset = `sync.reset: walked again: ${count} jobs; ${count} jobs`
  await receiver.until(reset)
  t.same(receiver.lines().slice(1), [
    `job.updated: ${jobId} is now "Senior Backend Engineer", 80 screens; ${count} jobs`,
    `job.deleted: ${jobId} removed; ${count - 1} jobs`,
    `job.updated: ${missing} is gone; ${count - 1} jobs`,
    'refused: no_matching_signature',
    reset,
  ])
})

t.test('before and after: the same task, the same output, with the bare generated client and with the package', async t => {
  const before = mustRun(t, process.execPath, ['dist/before.js'], { cwd: project, env })
  const after = mustRun(t, process.execPath, ['dist/after.js'], { cwd: project, env })
  t.match(before, /^poll 1: [1-9]\d* changed, 0 unchanged\npoll 2: 0 changed, [1-9]\d* unchanged\n$/)
  t.equal(after, before)
  t.comment(`lines of code: before ${examples.before.split('\n').length}, after ${examples.after.split('\n').length}`)
})
