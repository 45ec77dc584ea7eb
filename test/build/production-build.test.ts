import { execFile } from 'node:child_process'
import { cp, mkdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
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

t.test('the compiled build starts with production dependencies only and serves requests', async t => {
  const dir = join(root, 'node_modules/.cache/production-build-test', String(process.pid))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await rm(dir, { recursive: true, force: true })
  await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')])
  for (const file of ['package.json', 'prisma/schema.prisma', 'prisma/migrations']) await cp(join(root, file), join(dir, file), { recursive: true })
  const packages = await productionPackages()
  t.ok(!packages.includes('tsx') && !packages.includes('typescript'), 'no TypeScript tooling')
  await Promise.all(packages.map(async name => {
    await mkdir(join(dir, 'node_modules', name, '..'), { recursive: true })
    await run('cp', ['-al', join(root, 'node_modules', name), join(dir, 'node_modules', name)])
  }))

  const { scripts } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  t.equal(scripts['start:prod'], 'node dist/server.js', 'start:prod is what this test runs')
  const server = await startServer(t, {}, { command: [process.execPath, 'dist/server.js'], cwd: dir })
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
