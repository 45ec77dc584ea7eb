// npm run openapi: writes openapi/openapi.json and openapi/openapi.yaml from the routes'
// TypeBox schemas. npm run openapi:check: fails when the committed files differ.
import { readFile, writeFile } from 'node:fs/promises'
import { stringify } from 'yaml'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openServerDatabase } from '../src/db/server-database.js'

export async function generateDocument (): Promise<{ json: string, yaml: string }> {
  // The document needs no database: a client that is never used (the pool connects lazily).
  const config = loadConfig({ LOG_LEVEL: 'silent' })
  const app = await buildApp({ config, database: openServerDatabase('postgresql://unused@127.0.0.1:9/unused', config) })
  await app.ready()
  const doc = app.swagger()
  await app.close()
  return { json: JSON.stringify(doc, null, 2) + '\n', yaml: stringify(doc, { lineWidth: 0 }) }
}

// OPENAPI_DIR: check another copy (the tests of this check use it).
const dir = process.env.OPENAPI_DIR !== undefined ? `file://${process.env.OPENAPI_DIR.replace(/\/?$/, '/')}` : new URL('../openapi/', import.meta.url)
const files = { json: new URL('openapi.json', dir), yaml: new URL('openapi.yaml', dir) }

if (import.meta.url === `file://${process.argv[1]}`) {
  const generated = await generateDocument()
  if (process.argv.includes('--check')) {
    const stale = []
    for (const kind of ['json', 'yaml'] as const) {
      const committed = await readFile(files[kind], 'utf8').catch(() => '')
      if (committed !== generated[kind]) stale.push(`openapi/openapi.${kind}`)
    }
    if (stale.length > 0) {
      console.error(`${stale.join(' and ')} differ from what the code generates. Run \`npm run openapi\` and commit the result.`)
      process.exit(1)
    }
    console.log('openapi/ is up to date with the code.')
  } else {
    await writeFile(files.json, generated.json)
    await writeFile(files.yaml, generated.yaml)
    console.log('Wrote openapi/openapi.json and openapi/openapi.yaml.')
  }
}
