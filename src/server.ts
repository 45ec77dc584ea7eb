import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { banner } from './demo/banner.js'
import { checkServingConfig, ConfigError, loadConfig } from './config.js'
import { DataDirInUse } from './db/data-dir-claim.js'
import { openDatabase } from './db/open-database.js'
import { existingDemoData, seedDemoData } from './demo/seed.js'
import { onStopSignals, STOP_SIGNALS } from './stop-signals.js'
import { startTracing, stopTracing } from './telemetry/tracing.js'

// The supported runtimes: Node 22.12 and later (pg-boss's floor; the image runs 24). An older
// one is named at start rather than refused: it may work, and no one is told why it would not.
const [major, minor] = process.versions.node.split('.').map(Number) as [number, number]
if (major < 22 || (major === 22 && minor < 12)) {
  console.warn(`Node ${process.versions.node} is older than this service supports (22.12 or later; the image runs 24): install Node 24 LTS. Node 20 reached its end of life in April 2026.`)
}

async function main (): Promise<void> {
  const config = loadConfig()
  checkServingConfig(config)
  // Before the database opens: its statements are traced from the first (db/server-database.ts).
  await startTracing()
  const database = await openDatabase(config)
  const demo = database.kind === 'embedded' && database.created ? await seedDemoData(database.prisma) : undefined
  const app = await buildApp({ config, database })

  const grace = closeWithGrace({ delay: 10_000, skip: [...STOP_SIGNALS] }, async ({ err }) => {
    if (err !== undefined) app.log.error({ err }, 'closing after an error')
    await app.close()
    await stopTracing()
  })
  onStopSignals(signal => {
    app.log.info({ signal }, 'closing')
    void grace.close()
  })

  await app.listen({ host: config.HOST, port: config.PORT })
  if (database.kind === 'embedded') {
    const address = app.server.address()
    const port = typeof address === 'object' && address !== null ? address.port : config.PORT
    const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST
    console.log(banner(config.PUBLIC_URL ?? `http://${host}:${port}`, demo ?? await existingDemoData(database.prisma), database.dataDir, config.WEBHOOK_ALLOWED_NETWORKS))
  }
}

main().catch((error: unknown) => {
  // A data directory another process owns: refused before anything is written (db/data-dir-claim.ts).
  console.error(error instanceof ConfigError || error instanceof DataDirInUse ? error.message : error)
  process.exit(1)
})
