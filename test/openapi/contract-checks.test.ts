import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'

// The CI checks of the contract fail when they should: each on a copy broken on purpose.
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, args, { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000 })
const tmp = mkdtempSync(join(tmpdir(), 'screening-checks-'))
t.teardown(() => rmSync(tmp, { recursive: true, force: true }))

t.test('openapi:check fails on a document that differs from the code', async t => {
  cpSync('openapi', join(tmp, 'openapi'), { recursive: true })
  t.equal(run(['--import', 'tsx', 'scripts/openapi.ts', '--check'], { OPENAPI_DIR: join(tmp, 'openapi') }).status, 0, 'a faithful copy passes')
  const file = join(tmp, 'openapi/openapi.json')
  writeFileSync(file, readFileSync(file, 'utf8').replace('"Get a job"', '"Get one job"'))
  const res = run(['--import', 'tsx', 'scripts/openapi.ts', '--check'], { OPENAPI_DIR: join(tmp, 'openapi') })
  t.equal(res.status, 1)
  t.match(res.stderr, /openapi\.json differ/)
})

t.test('sdk:check fails on a client that differs from the document, or a package version that is not info.version', async t => {
  const sdk = join(tmp, 'sdk')
  cpSync('clients/typescript', sdk, { recursive: true, filter: path => !/[/\\](node_modules|dist)$/.test(path) })
  const check = () => run(['--import', 'tsx', 'scripts/sdk.ts', '--check'], { SDK_DIR: sdk })
  t.equal(check().status, 0, 'a faithful copy passes')

  const types = join(sdk, 'src/generated/types.gen.ts')
  const faithful = readFileSync(types, 'utf8')
  writeFileSync(types, faithful.replace('question_count: number', 'question_count: string'))
  let res = check()
  t.equal(res.status, 1)
  t.match(res.stderr, /src\/generated\/types\.gen\.ts/)
  writeFileSync(types, faithful)

  const manifest = join(sdk, 'package.json')
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(/"version": "[^"]*"/, '"version": "9.9.9"'))
  res = check()
  t.equal(res.status, 1)
  t.match(res.stderr, /package\.json \(version is not info\.version/)
})

t.test('the Spectral lint fails on a document that breaks its rules', async t => {
  const doc = JSON.parse(readFileSync('openapi/openapi.json', 'utf8'))
  delete doc.info.contact
  delete doc.components.schemas.Job.properties.title.maxLength
  const file = join(tmp, 'bad.json')
  writeFileSync(file, JSON.stringify(doc))
  const res = run(['node_modules/@stoplight/spectral-cli/dist/index.js', 'lint', file, '--ruleset', 'openapi/spectral.mjs', '--fail-severity', 'warn'])
  t.not(res.status, 0)
  t.match(res.stdout, /info-contact/)
  t.match(res.stdout, /owasp:api4:2023-string-limit/)
})
