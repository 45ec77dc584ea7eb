// `prisma generate` without network: generation runs on WebAssembly, but the CLI insists on
// locating a native schema engine first. Any existing file satisfies that check, and
// generate never executes it.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? fileURLToPath(import.meta.url), PRISMA_HIDE_UPDATE_MESSAGE: '1' }
const result = spawnSync(process.execPath, ['node_modules/prisma/build/index.js', 'generate'], { stdio: 'inherit', env })
process.exit(result.status ?? 1)
