// npm run db:seed: resets the demo organizations on the configured database and prints
// their keys. The demo keys are derived from fixed labels: never seed a database that
// faces the internet.
import { ConfigError, loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/open-database.js'
import { seedDemoData } from '../src/demo/seed.js'

try {
  const config = loadConfig()
  // Beside a running service on the embedded database, through its socket (src/db/door.ts).
  const db = await openDatabase(config, { beside: 'door' })
  try {
    const demo = await seedDemoData(db.prisma)
    console.log(`Seeded demo data into the ${db.throughDoor !== undefined ? 'embedded database, through the running service\'s socket' : `${db.kind} database`}.`)
    for (const c of demo.credentials) console.log(`  ${c.plan.padEnd(4)}  ${c.organization.padEnd(18)} ${c.key}${c.scopes !== undefined ? `  (${c.scopes.join(', ')} only)` : ''}`)
  } finally {
    await db.close()
  }
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error)
  process.exitCode = 1
}
