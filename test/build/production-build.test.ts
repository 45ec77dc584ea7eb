import { execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { cp, mkdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import t from 'tap'
import { openServerDatabase } from '../../src/db/database.js'
import { serverUrl } from '../helpers/database.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { freePort } from '../helpers/ports.js'
import { startServer } from '../helpers/server-process.js'

// `npm run build` then `npm run start:prod`, as the image runs them: compiled JavaScript in a
// directory that has production dependencies only (hard links to this checkout's, so that a
// module the build needs but `npm prune --omit=dev` would remove fails here too).

const root = join(import.meta.dirname, '../..')
const run = promisify(execFile)

interface Lock { packages: Record<string, { dev?: boolean, devOptional?: boolean }> }

async function productionPackages (): Promise<string[]> {
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as Lock
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.startsWith('node_modules/') && !path.slice(13).includes('node_modules/') && entry.dev !== true && entry.devOptional !== true)
    .map(([path]) => path.slice(13))
}

// The commands the image and the compose file run, read from them so that this test runs
// exactly those.
const dockerfile = await readFile(join(root, 'Dockerfile'), 'utf8')
const jsonInstruction = (name: string): string[] => JSON.parse(new RegExp(`^${name} (\\[.*\\])$`, 'm').exec(dockerfile)?.[1] ?? '[]') as string[]
const imageCommand = jsonInstruction('CMD')
const compose = await readFile(join(root, 'docker-compose.yml'), 'utf8')
const migrateCommand = JSON.parse(/^ {2}migrate:\n(?: {4}.*\n)*? {4}command: (\[.*\])$/m.exec(compose)?.[1] ?? '[]') as string[]

// The build in a directory with production dependencies only, as the image has it.
const dir = join(root, 'node_modules/.cache/production-build-test', String(process.pid))
t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
await rm(dir, { recursive: true, force: true })
await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')])
for (const file of ['package.json', 'prisma/schema.prisma', 'prisma/migrations']) await cp(join(root, file), join(dir, file), { recursive: true })
const packages = await productionPackages()
await Promise.all(packages.map(async name => {
  await mkdir(join(dir, 'node_modules', name, '..'), { recursive: true })
  await run('cp', ['-al', join(root, 'node_modules', name), join(dir, 'node_modules', name)])
}))
t.test('the image runs node dist/server.js under tini; compose migrates with node dist/migrate.js', async t => {
  t.same(imageCommand, ['node', 'dist/server.js'])
  t.same(jsonInstruction('ENTRYPOINT'), ['/usr/bin/tini', '--'], 'signals reach node through tini')
  t.match(dockerfile, /^USER node$/m, 'not root')
  t.match(dockerfile, /^HEALTHCHECK .*\n? *CMD .*\/health\/ready/m, 'a health check on readiness')
  t.same(migrateCommand, ['node', 'dist/migrate.js'])
})

// `node` of the image's command is this process's node.
const command = (argv: string[]): string[] => argv.map(a => (a === 'node' ? process.execPath : a))

t.test('the compiled build starts with production dependencies only and serves requests', async t => {
  t.ok(!packages.includes('tsx') && !packages.includes('typescript'), 'no TypeScript tooling')
  const { scripts } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  t.equal(scripts['start:prod'], imageCommand.join(' '), 'start:prod is the image\'s command')
  const server = await startServer(t, {}, { command: command(imageCommand), cwd: dir })
  const job = await fetch(`${server.baseUrl}/api/jobs/${server.sampleJobId}`, { headers: { authorization: `Bearer ${server.keys.pro}` } })
  t.equal(job.status, 200)
  t.equal((await job.json() as { id: string }).id, server.sampleJobId)
  const analytics = await fetch(`${server.baseUrl}/api/jobs/${server.sampleJobId}/analytics?tz=Asia/Kolkata`, { headers: { authorization: `Bearer ${server.keys.pro}` } })
  t.equal(analytics.status, 200)
  const docs = await fetch(`${server.baseUrl}/openapi.json`)
  t.equal((await docs.json() as { info: { version: string } }).info.version, (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }).version)
  t.equal((await fetch(`${server.baseUrl}/docs/`)).status, 200, 'Swagger UI assets are found')
  t.equal(await server.stop('SIGTERM'), 0, 'SIGTERM closes cleanly')
})

t.test('as the image runs against PostgreSQL: the migrate command, then the start command', { skip: serverUrl === undefined ? 'needs TEST_DATABASE_URL (a throwaway database is made beside it)' : false }, async t => {
  // An empty database, as on a first deploy.
  const name = `${new URL(serverUrl!).pathname.slice(1).replace(/\W/g, '_').slice(0, 30)}_build_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  t.teardown(async () => { await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await admin.end() })
  const url = new URL(serverUrl!)
  url.pathname = `/${name}`
  const env = { PATH: process.env.PATH, NODE_ENV: 'production', HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_URL: url.toString() }

  const migrated = await run(command(migrateCommand)[0]!, command(migrateCommand).slice(1), { cwd: dir, env })
  t.match(migrated.stdout, /^Applied: \d+_/, 'the migrate command applied the migrations')

  const refused = await run(command(imageCommand)[0]!, command(imageCommand).slice(1), { cwd: dir, env: { ...env, PORT: '0' } }).then(() => undefined, (e: { code: number, stderr: string }) => e)
  t.equal(refused?.code, 1, 'without CURSOR_SECRET it refuses to start')
  t.match(refused?.stderr, /CURSOR_SECRET is required/)

  const owner = openServerDatabase(url.toString(), { DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 30_000, DB_STATEMENT_TIMEOUT_MS: 30_000 })
  t.teardown(owner.close)
  const tenant = await createTenant(owner.prisma, { plan: 'pro' })
  const job = await createJob(owner.prisma, tenant)

  const port = await freePort()
  const child = spawn(command(imageCommand)[0]!, command(imageCommand).slice(1), { cwd: dir, env: { ...env, PORT: String(port), CURSOR_SECRET: randomBytes(24).toString('base64') }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c: Buffer) => { output += c.toString() })
  child.stderr.on('data', (c: Buffer) => { output += c.toString() })
  const exited = once(child, 'exit') as Promise<[number | null]>
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const base = `http://127.0.0.1:${port}`
  const started = Date.now()
  let ready = 0
  while (ready !== 200 && child.exitCode === null && Date.now() - started < 30_000) {
    ready = await fetch(`${base}/health/ready`).then(r => r.status, () => 0)
    if (ready !== 200) await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.equal(ready, 200, `ready within ${Date.now() - started} ms ${output}`)
  const res = await fetch(`${base}/api/jobs/${job.id}`, { headers: tenant.auth })
  t.equal(res.status, 200)
  t.equal((await res.json() as { id: string }).id, job.id)
  t.equal((await fetch(`${base}/api/jobs`)).status, 401)
  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0, 'SIGTERM closes cleanly')
})
