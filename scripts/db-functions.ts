// npm run db:functions: writes prisma/current-functions.sql, the current definition of every
// function and trigger, from the migrations applied to an embedded database in memory.
import { writeFile } from 'node:fs/promises'
import { currentFunctions } from '../src/db/current-functions.js'
import { openEmbeddedDatabase } from '../src/db/embedded-database.js'
import { clientReader } from '../src/db/sql-reader.js'

const database = await openEmbeddedDatabase(undefined)
try {
  await writeFile(new URL('../prisma/current-functions.sql', import.meta.url), await currentFunctions(clientReader(database.prisma)))
  console.log('Wrote prisma/current-functions.sql.')
} finally {
  await database.close()
}
