// The node_modules files the compiled build loads, and nothing else, for the image: @vercel/nft
// traces dist/server.js and dist/migrate.js. `npm prune --omit=dev` kept every production
// package whole with all its dependencies, used or not (the Prisma CLI's, through
// @prisma/client's peer). The test test/build/production-build.test.ts runs the build on the
// same list, so a file the trace misses fails there too.
//   node scripts/production-modules.mjs OUT   (copies them to OUT/node_modules)
import { cp, mkdir } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeFileTrace } from '@vercel/nft'

const root = resolve(fileURLToPath(import.meta.url), '../..')

// What the trace cannot see: files found by a computed path at run time.
const untraced = [
  // src/db/schema-engine.ts: require.resolve(...).replace(/\.js$/, '.wasm').
  'node_modules/@prisma/schema-engine-wasm/schema_engine_bg.wasm',
  // src/zones/rules.ts: the zone rules' data file, by require.resolve (read with readFileSync,
  // so that ZONE_RULES_FILE can name another).
  'node_modules/moment-timezone/data/packed/latest.json',
  // @fastify/swagger-ui serves this folder with @fastify/static. Its bundle is for the
  // browser: tracing its imports would add React and the like (ignored below).
  'node_modules/@fastify/swagger-ui/static',
]

/** Paths relative to the checkout, of the files under node_modules that `dist` (default: the checkout's) loads. */
export async function productionModules (dist = join(root, 'dist')) {
  const { fileList } = await nodeFileTrace([join(dist, 'server.js'), join(dist, 'migrate.js')], {
    base: root,
    ignore: path => path.startsWith('node_modules/@fastify/swagger-ui/static/'),
  })
  return [...fileList].filter(path => path.startsWith('node_modules/')).concat(untraced).sort()
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = resolve(process.argv[2] ?? 'production')
  for (const path of await productionModules()) {
    await mkdir(dirname(join(out, path)), { recursive: true })
    await cp(join(root, path), join(out, path), { recursive: true, verbatimSymlinks: true })
  }
  console.log(`${relative(process.cwd(), out) || '.'}/node_modules: the traced production files`)
}
