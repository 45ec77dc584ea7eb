import { readFile } from 'node:fs/promises'
import t from 'tap'
import { currentFunctions, databaseObjects, roleOf } from '../../src/db/current-functions.js'
import { createTestDatabase, serverUrl } from '../helpers/database.js'
import { clientReader } from '../../src/db/sql-reader.js'

// prisma/current-functions.sql is where a reader finds what each function and trigger is
// now: it must be what the migrations give. On the embedded database only, which is what
// `npm run db:functions` reads (another PostgreSQL version may print a definition otherwise).
t.test('prisma/current-functions.sql is what the migrations define', { skip: serverUrl !== undefined ? 'compared on the embedded database, which npm run db:functions reads' : false }, async t => {
  const db = await createTestDatabase()
  t.teardown(() => db.close())
  const committed = await readFile(new URL('../../prisma/current-functions.sql', import.meta.url), 'utf8')
  const generated = await currentFunctions(clientReader(db.prisma))
  t.ok(generated.includes('FUNCTION public.screens_append_update_delta()'), 'it holds the functions (one checked by name)')
  t.ok(generated.includes('CREATE TRIGGER screens_summary_deltas_update AFTER UPDATE ON public.screens FOR EACH ROW'), 'and the triggers')
  t.equal(committed, generated, 'up to date: run `npm run db:functions` and commit the file when this fails')
})

t.test('every function says its role and caller, every trigger what it writes, and docs/architecture.md lists every trigger', { skip: serverUrl !== undefined ? 'read on the embedded database' : false }, async t => {
  const db = await createTestDatabase()
  t.teardown(() => db.close())
  const { functions, triggers } = await databaseObjects(clientReader(db.prisma))
  t.same(functions.filter(f => roleOf(f.comment) === undefined).map(f => f.name), [], 'a COMMENT ON FUNCTION "<Role>: …" for each function')
  t.same(triggers.filter(tr => tr.comment === null).map(tr => tr.name), [], 'a COMMENT ON TRIGGER for each trigger')
  const architecture = await readFile(new URL('../../docs/architecture.md', import.meta.url), 'utf8')
  const table = architecture.slice(architecture.indexOf('## Triggers'))
  t.same(triggers.filter(tr => !table.includes(`\`${tr.name}\``)).map(tr => tr.name), [], 'each trigger in the table of docs/architecture.md, "Triggers"')
})
