import { appendFileSync } from 'node:fs'
import { registerHooks } from 'node:module'

// Loaded with `--import` into a server under test: every package module the process loads
// (ESM or CommonJS), and every module of src/telemetry/, is appended to RECORD_MODULES_FILE, to tell what a setting made it load.

const file = process.env.RECORD_MODULES_FILE
if (file !== undefined) {
  registerHooks({
    resolve (specifier, context, next) {
      const result = next(specifier, context)
      if (result.url.includes('/node_modules/') || result.url.includes('/src/telemetry/')) appendFileSync(file, `${result.url}\n`)
      return result
    },
  })
}
