// npm run sdk: generates the typed TypeScript client in clients/typescript/ from the committed
// openapi/openapi.json, with @hey-api/openapi-ts (fetch client, types, SDK functions; the client
// runtime is bundled into the output, so it needs no npm package). Offline and deterministic.
// npm run sdk:check: generates into a temporary directory and fails when clients/typescript/
// differs from it.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient } from '@hey-api/openapi-ts'

const root = fileURLToPath(new URL('..', import.meta.url))
const input = join(root, 'openapi/openapi.json')
// SDK_DIR: check another copy (the tests of this check use it).
export const clientDir = process.env.SDK_DIR ?? join(root, 'clients/typescript')

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
      // The runtime (clients/typescript/client/, core/) is bundled; `client`, the default
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
      const [expected, committed] = await Promise.all([snapshot(tmp), snapshot(clientDir)])
      const drifted = [...new Set([...expected.keys(), ...committed.keys()])].sort()
        .filter(path => expected.get(path) !== committed.get(path))
        .map(path => `clients/typescript/${path}${!committed.has(path) ? ' (missing)' : !expected.has(path) ? ' (not generated)' : ''}`)
      if (drifted.length > 0) {
        console.error(`clients/typescript/ differs from what openapi/openapi.json generates:\n  ${drifted.join('\n  ')}\nRun \`npm run sdk\` and commit the result.`)
        process.exitCode = 1
      } else {
        console.log('clients/typescript/ is up to date with openapi/openapi.json.')
      }
    } finally {
      await rm(tmp, { recursive: true, force: true })
    }
  } else {
    await generateClient(clientDir)
    console.log('Wrote clients/typescript/ from openapi/openapi.json.')
  }
}
