import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { bindMigrationAwareSqlAdapterFactory, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import * as bindings from '@prisma/schema-engine-wasm/schema_engine_bg'
import type { SchemaEngine } from '@prisma/schema-engine-wasm/schema_engine_bg'

export type { SchemaEngine }

// Node's global, which @types/node does not describe; only what we use of it.
declare const WebAssembly: {
  instantiate: (bytes: Uint8Array, imports: Record<string, unknown>) => Promise<{ instance: { exports: Record<string, unknown> } }>
}

let ready: Promise<void> | undefined

// The package's main entry imports the .wasm file as an ES module, which Node refuses;
// instantiate the module ourselves and hand it to the bindings, as that entry would.
function loadWasm (): Promise<void> {
  ready ??= (async () => {
    const require = createRequire(import.meta.url)
    // The .wasm file is not in the package's exports; it sits beside the bindings.
    const path = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg').replace(/\.js$/, '.wasm')
    // The engine arms timers it never clears (a 10 s lock timeout among them); unref'd, they
    // no longer keep a finished script or test process alive.
    const imports: Record<string, unknown> = { ...bindings }
    for (const [name, fn] of Object.entries(bindings)) {
      if (name.startsWith('__wbg_setTimeout_')) {
        imports[name] = (...args: unknown[]) => {
          const timer = (fn as (...a: unknown[]) => unknown)(...args)
          if (typeof timer === 'object' && timer !== null && 'unref' in timer) (timer as NodeJS.Timeout).unref()
          return timer
        }
      }
    }
    const { instance } = await WebAssembly.instantiate(await readFile(path), { './schema_engine_bg.js': imports })
    bindings.__wbg_set_wasm(instance.exports)
    ;(instance.exports.__wbindgen_start as () => void)()
  })()
  return ready
}

/** A schema engine (the WebAssembly build of Prisma Migrate's) talking through a driver adapter. */
export async function openSchemaEngine (adapterFactory: SqlMigrationAwareDriverAdapterFactory, schema: { path: string, content: string }): Promise<SchemaEngine> {
  await loadWasm()
  const log = (): void => {}
  return await bindings.SchemaEngine.new(
    { datamodels: [[schema.path, schema.content]] },
    log,
    bindMigrationAwareSqlAdapterFactory(adapterFactory)
  )
}
