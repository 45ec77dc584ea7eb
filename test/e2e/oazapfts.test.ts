import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import t, { type Test } from 'tap'
import { startServer } from '../helpers/server-process.js'

// A second, third-party generator against the committed document, so that a contract change
// that breaks generated clients shows up here: oazapfts (which read this document best of
// the five tried, issue 22) generates a client from openapi/openapi.json; tsc compiles it
// with test/e2e/oazapfts/program.ts, strict; the program runs against the real server with
// its demo data (a job, a 304 on the job and on /api/me, a list, a 404, a 403).

const root = resolve('.')
const tmp = mkdtempSync(join(tmpdir(), 'screening-oazapfts-'))
t.teardown(() => rmSync(tmp, { recursive: true, force: true }))

function mustRun (t: Test, command: string, args: string[], env: Record<string, string> = {}): string {
  const { DATABASE_URL: _, ...inherited } = process.env
  const res = spawnSync(command, args, { cwd: tmp, env: { ...inherited, ...env }, encoding: 'utf8', timeout: 180_000 })
  if (res.status !== 0) t.fail(`${command} ${args.join(' ')} exited ${res.status}:\n${res.stdout}\n${res.stderr}`)
  return res.stdout
}

const server = await startServer(t)

t.test('oazapfts: generate, compile with tsc, run against the server', async t => {
  mustRun(t, process.execPath, [join(root, 'node_modules/oazapfts/dist/cli.js'), join(root, 'openapi/openapi.json'), join(tmp, 'client.ts')])
  const client = readFileSync(join(tmp, 'client.ts'), 'utf8')
  for (const operation of ['getJob', 'getJobAnalytics', 'listJobs', 'getMe']) t.match(client, new RegExp(`export function ${operation}\\(`), `${operation} generated`)
  copyFileSync(join(root, 'test/e2e/oazapfts/program.ts'), join(tmp, 'program.ts'))
  // The generated client's one dependency, @oazapfts/runtime, from this repository.
  symlinkSync(join(root, 'node_modules'), join(tmp, 'node_modules'), 'dir')
  writeFileSync(join(tmp, 'package.json'), JSON.stringify({ name: 'oazapfts-client', private: true, type: 'module' }))
  writeFileSync(join(tmp, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, outDir: 'dist', types: ['node'], lib: ['ES2022', 'DOM'] },
    files: ['client.ts', 'program.ts'],
  }))
  mustRun(t, process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', tmp])
  const out = mustRun(t, process.execPath, ['dist/program.js'], { API_URL: server.baseUrl, PRO_KEY: server.keys.pro, FREE_KEY: server.keys.free, JOB_ID: server.sampleJobId })
  t.comment(`oazapfts program output:\n${out}`)
  t.match(out, /^all checks passed$/m)
})
