import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import t, { type Test } from 'tap'
import { startServer } from '../helpers/server-process.js'

// The SDK as a partner gets it: built, packed with npm pack, installed from the tarball into
// a project outside the repository, compiled there with tsc against the installed package,
// and run against the real server with its demo data. What runs: e2e/partner-program.ts
// (every operation, pagination, typed errors, polling, retries), every TypeScript example of
// the package's README, and the before/after examples.

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
const server = await startServer(t)
const limited = await startServer(t, { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '2' })
const env = { SCREENING_API_URL: server.baseUrl, SCREENING_API_KEY: server.keys.pro, JOB_ID: server.sampleJobId }

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
}

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
  t.ok(examples.readme.length >= 7, `${examples.readme.length} README examples`)
  mustRun(t, process.execPath, [tsc, '-p', project], { cwd: project })
  t.ok(readdirSync(join(project, 'dist')).includes('program.js'), 'compiled')
})

t.test('the partner program: every operation, pages of 1, typed 403 and 404, a 304 from the cache, a 429 retried', async t => {
  const out = mustRun(t, process.execPath, ['dist/program.js'], {
    cwd: project,
    env: { API_URL: server.baseUrl, PRO_KEY: server.keys.pro, FREE_KEY: server.keys.free, RESTRICTED_KEY: server.keys.restricted, JOB_ID: server.sampleJobId, LIMITED_URL: limited.baseUrl, LIMITED_KEY: limited.keys.pro },
  })
  t.comment(`program output:\n${out}`)
  t.match(out, /^all checks passed$/m)
})

t.test('every TypeScript example of the README runs', async t => {
  examples.readme.forEach((_, i) => {
    const out = mustRun(t, process.execPath, [`dist/readme-${i + 1}.js`], { cwd: project, env })
    t.ok(out.trim().length > 0, `README example ${i + 1} printed:\n${out}`)
  })
})

t.test('before and after: the same task, the same output, with the bare generated client and with the package', async t => {
  const before = mustRun(t, process.execPath, ['dist/before.js'], { cwd: project, env })
  const after = mustRun(t, process.execPath, ['dist/after.js'], { cwd: project, env })
  t.match(before, /^poll 1: [1-9]\d* changed, 0 unchanged\npoll 2: 0 changed, [1-9]\d* unchanged\n$/)
  t.equal(after, before)
  t.comment(`lines of code: before ${examples.before.split('\n').length}, after ${examples.after.split('\n').length}`)
})
