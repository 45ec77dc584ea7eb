import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { banner } from './demo/banner.js'
import { checkServingConfig, ConfigError, loadConfig } from './config.js'
import { openDatabase } from './db/database.js'
import { existingDemoData, seedDemoData } from './demo/seed.js'

async function main (): Promise<void> {
  const config = loadConfig()
  checkServingConfig(config)
  const database = await openDatabase(config)
  const demo = database.kind === 'embedded' && database.created ? await seedDemoData(database.prisma) : undefined
  const app = await buildApp({ config, database })

  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'closing after an error')
    else app.log.info({ signal }, 'closing')
    await app.close()
  })

  await app.listen({ host: config.HOST, port: config.PORT })
  if (database.kind === 'embedded') {
    const address = app.server.address()
    const port = typeof address === 'object' && address !== null ? address.port : config.PORT
    const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST
    console.log(banner(config.PUBLIC_URL ?? `http://${host}:${port}`, demo ?? await existingDemoData(database.prisma)))
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error)
  process.exit(1)
})
