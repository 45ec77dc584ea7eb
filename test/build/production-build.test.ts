import { execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import t from 'tap'
import { openServerDatabase } from '../../src/db/server-database.js'
import { serverUrl } from '../helpers/database.js'
import { createJob, createTenant } from '../helpers/fixtures.js'
import { linkTree } from '../helpers/link-tree.js'
import { freePort } from '../helpers/ports.js'
import { PRODUCTION_NODE_FLAGS } from '../../bench/servers.js'
// @ts-expect-error: a plain ES module script, no declarations
import { productionModules } from '../../scripts/production-modules.mjs'
import { compose, healthCommand, imageCommand, imageEntrypoint, imageEnv, imageFiles, instructions, migrateCommand } from '../helpers/image-spec.js'
import { startOtlpReceiver } from '../helpers/otlp-receiver.js'
import { startServer } from '../helpers/server-process.js'
import { until, within } from '../helpers/until.js'

// The image, run outside Docker (CI also builds and runs the real one: deploy/stack-test): its
// runtime stage's files, environment and commands are read from the Dockerfile, and the
// migrate service's command from docker-compose.yml, so that what runs here is what they say.
// The files are the compiled build in a directory whose node_modules holds only the files the
// image's does, those scripts/production-modules.mjs traces from the build (hard links to this
// checkout's, so that a file the build needs but the trace misses fails here too).

const root = join(import.meta.dirname, '../..')
const run = promisify(execFile)

// `node` of the image's commands is this process's node.
const command = (argv: string[]): [string, string[]] => {
  const [program, ...args] = argv.map(a => (a === 'node' ? process.execPath : a))
  return [program!, args]
}

// The image's files, outside Docker, and outside the checkout: inside it, a file the trace
// missed would still be found in the checkout's node_modules, where Node's resolution climbs
// (the zone rules' data file was, until a Compose run failed on it).
const dir = await mkdtemp(join(tmpdir(), 'production-build-test-'))
// The build first, in the checkout: the image's node_modules is traced from it, as the
// Dockerfile's build stage traces it.
const build = join(root, 'node_modules/.cache/production-build-test', String(process.pid))
t.teardown(async () => { await rm(dir, { recursive: true, force: true }); await rm(build, { recursive: true, force: true }) })
await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(build, 'dist')])
const modules = await productionModules(join(build, 'dist')) as string[]
// Package names, from the traced paths (node_modules/name/... or node_modules/@scope/name/...).
const packages = [...new Set(modules.map(path => /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path))]
for (const file of imageFiles) {
  if (file === 'dist') {
    await cp(join(build, 'dist'), join(dir, 'dist'), { recursive: true })
  } else if (file === 'node_modules') {
    for (const path of modules) {
      await mkdir(join(dir, path, '..'), { recursive: true })
      await linkTree(join(root, path), join(dir, path))
    }
  } else {
    await cp(join(root, file), join(dir, file), { recursive: true })
  }
}

t.test('the image: node (its V8 settings) dist/server.js under tini, as node; compose migrates with node dist/migrate.js first', async t => {
  t.same(imageCommand, ['node', ...PRODUCTION_NODE_FLAGS, 'dist/server.js'])
  t.same(imageEntrypoint, ['/usr/bin/tini', '--'], 'signals reach node through tini')
  t.same(instructions('USER'), ['node'], 'not root')
  t.match(healthCommand.join(' '), /\/health\/ready/, 'a health check on readiness')
  t.match(imageEnv, { NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '3000' })
  t.same([...imageFiles].sort(), ['dist', 'node_modules', 'package.json', 'prisma/migrations', 'prisma/schema.prisma', 'prisma/sql'], 'compiled code, production dependencies, migrations and the API role\'s script only')
  const { migrate, api } = compose.services
  t.same(migrateCommand, ['node', 'dist/migrate.js'])
  t.same([migrate?.build, migrate?.image], [api?.build ?? 'no build', api?.image], 'migrate runs the API\'s image')
  t.same([api?.command, api?.entrypoint], [undefined, undefined], 'the API runs the image\'s entrypoint and command')
  t.match(api?.environment?.CURSOR_SECRET, /^\$\{CURSOR_SECRET:\?/, 'Compose refuses to start the API without CURSOR_SECRET')
  t.ok((api?.deploy?.replicas ?? 1) > 1, 'several instances')
})

t.test('the compiled build starts with production dependencies only and serves requests', async t => {
  t.ok(!packages.includes('tsx') && !packages.includes('typescript'), 'no TypeScript tooling')
  t.same(packages.filter(name => ['prisma', '@prisma/dev', '@prisma/studio-core', 'effect', '@vercel/nft'].includes(name)), [], 'no Prisma CLI, Studio, @prisma/dev, effect or the tracer')
  t.ok(packages.includes('@prisma/schema-engine-wasm') && modules.some(path => path.endsWith('.wasm')), 'the schema engine\'s WebAssembly, for dist/migrate.js')
  const { scripts } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  t.equal(scripts['start:prod'], imageCommand.join(' '), 'start:prod is the image\'s command')
  t.equal(scripts['db:migrate:prod'], migrateCommand.join(' '), 'db:migrate:prod is the migrate service\'s command')
  const [program, args] = command(imageCommand)
  const server = await startServer(t, {}, { command: [program, ...args], cwd: dir })
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

// The exporters are imported by a computed choice (the protocol's variable): the trace must
// still have found both, or tracing would fail only in the image.
t.test('the compiled build traces: both OTLP protocols\' exporters are in the image\'s files', async t => {
  const otlp = await startOtlpReceiver()
  t.teardown(otlp.close)
  const [program, args] = command(imageCommand)
  for (const protocol of ['http/protobuf', 'http/json']) {
    const server = await startServer(t, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_BSP_SCHEDULE_DELAY: '50' }, { command: [program, ...args], cwd: dir })
    const traceId = randomBytes(16).toString('hex')
    const res = await fetch(`${server.baseUrl}/api/jobs/${server.sampleJobId}`, { headers: { authorization: `Bearer ${server.keys.pro}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } })
    t.equal(res.status, 200)
    await until(`the ${protocol} spans`, () => otlp.spans.some(s => s.traceId === traceId && s.kind === 2), 20_000)
    t.match(otlp.spans.find(s => s.traceId === traceId && s.kind === 2), { name: 'GET /api/jobs/:jobId', contentType: protocol === 'http/json' ? 'application/json' : 'application/x-protobuf' }, `${protocol}: the request's span received`)
    t.equal(await server.stop('SIGTERM'), 0)
  }
})

t.test('against PostgreSQL as the compose file runs it: the migrate command, then the image\'s command', { skip: serverUrl === undefined ? 'needs TEST_DATABASE_URL (an empty database is made beside it)' : false }, async t => {
  // An empty database of its own, as on a first deploy (named like the helpers' databases,
  // so that CI's clean-up finds it if this process dies).
  const name = `${new URL(serverUrl!).pathname.slice(1).replace(/[^a-z0-9_]/gi, '_').slice(0, 30) || 'screening'}_build_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  // The API's role as the migrate step makes it, named for this test (roles are the
  // cluster's, not the database's) and dropped with the database.
  const role = `${name}_api`
  t.teardown(async () => { await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await admin.query(`DROP ROLE IF EXISTS ${role}`); await admin.end() })
  const url = new URL(serverUrl!)
  url.pathname = `/${name}`
  // The image's environment, plus what Compose passes; nothing inherited from this process.
  // Loopback instead of 0.0.0.0: a test listens on no public interface.
  const migrateEnv = { PATH: process.env.PATH, ...imageEnv, HOST: '127.0.0.1', LOG_LEVEL: 'info', DATABASE_URL: url.toString(), API_DB_ROLE: role, API_DB_PASSWORD: randomBytes(24).toString('hex') }
  const apiUrl = new URL(url)
  apiUrl.username = role
  apiUrl.password = migrateEnv.API_DB_PASSWORD
  const env = { ...migrateEnv, API_DB_ROLE: undefined, API_DB_PASSWORD: undefined, DATABASE_URL: apiUrl.toString() }

  const [migrate, migrateArgs] = command(migrateCommand)
  const migrated = await run(migrate, migrateArgs, { cwd: dir, env: migrateEnv })
  t.match(migrated.stdout, /^Applied: \S/m, 'the migrate command applies the migrations to an empty database')
  t.match(migrated.stdout, new RegExp(`^API role ${role}: created or updated`, 'm'), 'and makes the API\'s role')
  const again = (await run(migrate, migrateArgs, { cwd: dir, env: migrateEnv })).stdout
  t.match(again, /^No pending migrations\.$/m, 'and again, as on every deploy: nothing to do')
  t.match(again, new RegExp(`^API role ${role}: created or updated`, 'm'), 'but the role\'s grants and password, brought up to date')
  const { rows: [made] } = await admin.query<{ rolsuper: boolean, rolcreaterole: boolean, rolcreatedb: boolean }>('SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = $1', [role])
  t.same(made, { rolsuper: false, rolcreaterole: false, rolcreatedb: false }, 'the API runs as a role with no superuser, role or database rights')

  const [program, args] = command(imageCommand)
  const refused = await run(program, args, { cwd: dir, env: { ...env, PORT: String(await freePort()) }, timeout: 30_000 })
    .then(() => ({ code: 0, stderr: '' }), (error: { code: number | null, stderr: string }) => error)
  t.not(refused.code, 0, 'without CURSOR_SECRET it refuses to start')
  t.match(refused.stderr, /CURSOR_SECRET/, 'naming CURSOR_SECRET')

  const owner = openServerDatabase(url.toString(), { DB_POOL_MAX: 2, DB_CONNECTION_TIMEOUT_MS: 5000, DB_QUERY_TIMEOUT_MS: 30_000, DB_STATEMENT_TIMEOUT_MS: 30_000 })
  t.teardown(owner.close)
  const tenant = await createTenant(owner.prisma, { plan: 'pro' })
  const job = await createJob(owner.prisma, tenant)

  const port = await freePort()
  const child = spawn(program, args, { cwd: dir, env: { ...env, PORT: String(port), CURSOR_SECRET: randomBytes(36).toString('base64') }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c: Buffer) => { output += c.toString() })
  child.stderr.on('data', (c: Buffer) => { output += c.toString() })
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  t.teardown(async () => { if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited } })
  const base = `http://127.0.0.1:${port}`
  let ready = 0
  await within(async () => (ready = await fetch(`${base}/health/ready`).then(r => r.status, () => 0)) === 200 || child.exitCode !== null, 30_000, 100)
  t.equal(ready, 200, 'ready', { output })
  t.equal((await fetch(`${base}/health/live`)).status, 200, '/health/live')
  t.equal((await fetch(`${base}/openapi.json`)).status, 200, '/openapi.json')
  const res = await fetch(`${base}/api/jobs/${job.id}`, { headers: tenant.auth })
  t.equal(res.status, 200, 'an authenticated read')
  t.equal((await res.json() as { id: string }).id, job.id)
  t.equal((await fetch(`${base}/api/jobs`)).status, 401)

  // The HEALTHCHECK command as Docker runs it in the container (the image's environment).
  const [check, checkArgs] = command(healthCommand)
  const health = (): Promise<number> => run(check, checkArgs, { env: { PATH: process.env.PATH, ...imageEnv, PORT: String(port) }, timeout: 10_000 })
    .then(() => 0, (error: { code: number }) => error.code)
  t.equal(await health(), 0, 'the image\'s health check passes')

  const stopping = Date.now()
  child.kill('SIGTERM')
  const [code, signal] = await exited
  const stopMs = Date.now() - stopping
  t.same([code, signal], [0, null], 'SIGTERM: exits 0', { output })
  // At most 3 s: the draining plugin waits up to 3 s for open keep-alive connections (this
  // test's fetch keeps one). The bound leaves room for a loaded CI machine and stays below
  // close-with-grace's 10 s, past which the exit would be forced.
  t.ok(stopMs < 8000, `promptly (${stopMs} ms)`)
  t.equal(await health(), 1, 'and the health check fails once it is gone')
})
