// npm run sdk: generates the typed client of the SDK package (clients/typescript/) into its
// src/generated/ from the committed openapi/openapi.json, with @hey-api/openapi-ts (fetch
// client, types, SDK functions; the client runtime is bundled into the output, so the package
// has no runtime dependency), and sets the package's version to the document's info.version.
// Offline and deterministic. The package's hand-written modules live beside src/generated/,
// which this replaces whole.
// npm run sdk:check: generates into a temporary directory and fails when src/generated/ or
// the package's version differs.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient } from '@hey-api/openapi-ts'

const root = fileURLToPath(new URL('..', import.meta.url))
const input = join(root, 'openapi/openapi.json')
// SDK_DIR: check another copy of the package (the tests of this check use it).
export const packageDir = process.env.SDK_DIR ?? join(root, 'clients/typescript')
const generatedDir = join(packageDir, 'src/generated')
const shown = (path: string): string => relative(root, path) || '.'

/** Writes the client generated from openapi/openapi.json into `dir`, replacing what it held. */
export async function generateClient (dir: string): Promise<void> {
  await createClient({
    input,
    output: {
      path: dir,
      clean: true,
      // The project resolves modules as NodeNext: relative imports need their `.js`.
      module: { extension: '.js' },
      postProcess: [],
    },
    plugins: [
      // The runtime (src/generated/client/, core/) is bundled; `client`, the default
      // instance, is exported from the entry next to the SDK functions and types.
      { name: '@hey-api/client-fetch', includeInEntry: true },
      '@hey-api/typescript',
      '@hey-api/sdk',
    ],
    // No banner, no log file in the working tree; a failure is thrown (and reported below).
    logs: { file: false, level: 'silent' },
  }).catch((error: unknown) => {
    // openapi-ts wraps the cause in a JobError whose message says nothing more.
    const cause = (error as { originalError?: { error?: unknown } }).originalError?.error
    throw cause instanceof Error ? cause : error
  })
  // The bundled fetch client names the DOM type `BodyInit`, which the project's lib (ES2023,
  // Node types, no DOM) lacks; Node's global `RequestInit['body']` is that union (or null).
  for (const [path, content] of await snapshot(dir)) {
    const patched = content.replace(/\bBodyInit\b/g, "RequestInit['body']")
    if (patched !== content) await writeFile(join(dir, path), patched)
  }
}

/** The document's info.version, which the package's version follows. */
async function apiVersion (): Promise<string> {
  return (JSON.parse(await readFile(input, 'utf8')) as { info: { version: string } }).info.version
}

/** The package's package.json text with `version`, its key order and layout kept. */
async function packageJsonWith (version: string): Promise<{ current: string, wanted: string }> {
  const current = await readFile(join(packageDir, 'package.json'), 'utf8')
  return { current, wanted: current.replace(/^(\s*"version":\s*)"[^"]*"/m, `$1${JSON.stringify(version)}`) }
}

/** Relative path → content of every file under `dir`, sorted by path. */
async function snapshot (dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  const paths = entries.filter(e => e.isFile()).map(e => relative(dir, join(e.parentPath, e.name))).sort()
  for (const path of paths) files.set(path, await readFile(join(dir, path), 'utf8'))
  return files
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--check')) {
    const tmp = await mkdtemp(join(tmpdir(), 'screening-sdk-'))
    try {
      await generateClient(tmp)
      const [expected, committed] = await Promise.all([snapshot(tmp), snapshot(generatedDir)])
      const drifted = [...new Set([...expected.keys(), ...committed.keys()])].sort()
        .filter(path => expected.get(path) !== committed.get(path))
        .map(path => `${shown(join(generatedDir, path))}${!committed.has(path) ? ' (missing)' : !expected.has(path) ? ' (not generated)' : ''}`)
      const { current, wanted } = await packageJsonWith(await apiVersion())
      if (current !== wanted) drifted.push(`${shown(join(packageDir, 'package.json'))} (version is not info.version ${await apiVersion()})`)
      if (drifted.length > 0) {
        console.error(`The SDK differs from what openapi/openapi.json generates:\n  ${drifted.join('\n  ')}\nRun \`npm run sdk\` and commit the result.`)
        process.exitCode = 1
      } else {
        console.log(`${shown(generatedDir)}/ and the package version are up to date with openapi/openapi.json.`)
      }
    } finally {
      await rm(tmp, { recursive: true, force: true })
    }
  } else {
    await generateClient(generatedDir)
    const version = await apiVersion()
    const { current, wanted } = await packageJsonWith(version)
    if (current !== wanted) await writeFile(join(packageDir, 'package.json'), wanted)
    console.log(`Wrote ${shown(generatedDir)}/ from openapi/openapi.json; package version ${version}.`)
  }
}
