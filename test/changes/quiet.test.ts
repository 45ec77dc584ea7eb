import t from 'tap'
import { foldScreenStats } from '../../src/admin/screen-stats.js'
import { clientReader } from '../../src/db/sql-reader.js'
import { changesPage } from '../../src/changes/changes-page.js'
import { SYNC_POINT } from '../../src/changes/point.js'
import { quietSince } from '../../src/changes/quiet.js'
import { bounded, parseSnapshot, type Snapshot } from '../../src/changes/snapshot.js'
import { createJob, createScreens, createTenant } from '../helpers/fixtures.js'
import { buildTestApp } from '../helpers/app.js'

// quietSince (the dispatcher's check before it reads a page per organization) must never call
// a position quiet that a sync page from it would report a change to, or find expired: it is
// checked here against the dispatcher's page itself (changesPage, the sync page's statement),
// after each kind of write the log knows. The app never folds by itself (the test does: an
// unfolded delta and a pending change are cases of their own).
// The organization never written is the check that quietSince does say quiet.
const { prisma } = await buildTestApp(t, { env: { SUMMARY_FOLD_INTERVAL_MS: '0', SYNC_PRUNE_INTERVAL_MS: '0' } })
const reader = clientReader(prisma)
const acme = await createTenant(prisma)
const other = await createTenant(prisma)
const job = await createJob(prisma, acme, { title: 'watched' })

interface Point { since: Snapshot, generation: number }
const pointNow = async (): Promise<Point> => {
  const [row] = await prisma.$queryRaw<Array<{ snapshot: string, generation: number }>>(SYNC_POINT(false))
  return { since: bounded(parseSnapshot(row!.snapshot)!), generation: row!.generation }
}
/** What quietSince says of each organization from `point`, beside what a page from it finds. */
const both = async (point: Point): Promise<Array<{ quiet: boolean, pageEmpty: boolean }>> => {
  const { quiet } = await quietSince(reader, [acme, other].map(o => ({ organizationId: o.organizationId, since: point.since })))
  return await Promise.all([acme, other].map(async (o, i) => {
    const page = await changesPage(reader, o.organizationId, { since: { seen: point.since, generation: point.generation }, limit: 100, analytics: true })
    return { quiet: quiet[i]!, pageEmpty: page.changes.length === 0 && !page.expired }
  }))
}

t.test('never quiet where a page finds a change; quiet where the organization was not written', async t => {
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['nothing written', async () => {}],
    ['a title changed', async () => await prisma.$executeRaw`UPDATE jobs SET title = 'renamed' WHERE id = ${job.id}::uuid`],
    ['a screen, not folded (a delta)', async () => { await createScreens(prisma, job.id, [{ status: 'completed', score: 70, completedAt: new Date('2026-01-07T10:00:00Z') }]) }],
    ['a question, not folded (a pending change)', async () => await prisma.$executeRaw`INSERT INTO questions (job_id, position, text) VALUES (${job.id}::uuid, 90, 'why?')`],
    ['the same, folded into the log', async () => { await prisma.$executeRaw`INSERT INTO questions (job_id, position, text) VALUES (${job.id}::uuid, 91, 'how?')`; await foldScreenStats(prisma) }],
    ['a job made', async () => await createJob(prisma, acme, { title: 'new' })],
  ]
  for (const [name, write] of cases) {
    await foldScreenStats(prisma)
    const before = await pointNow()
    await write()
    const [seen, unrelated] = await both(before)
    const wrote = name !== 'nothing written'
    t.equal(seen!.pageEmpty, !wrote, `${name}: a page from before sees ${wrote ? 'it' : 'nothing'}`)
    if (wrote) t.equal(seen!.quiet, false, `${name}: not quiet`)
    // Where nothing was written, quiet unless a transaction elsewhere in the cluster holds the
    // snapshot's xmin below the organization's earlier entries (conservative, so allowed).
    t.ok(!seen!.quiet || seen!.pageEmpty, `${name}: quiet only where a page finds nothing`)
    t.same(unrelated, { quiet: true, pageEmpty: true }, `${name}: another organization (never written): quiet`)
    const after = (await both(await pointNow()))[0]!
    t.equal(after.pageEmpty, true, `${name}: from a point after it, a page finds nothing`)
  }
})

t.test('a position ahead of the database, or of another generation, is not quiet', async t => {
  const now = await pointNow()
  const ahead = { xmin: now.since.xmax + 1000n, xmax: now.since.xmax + 1000n, xip: [] }
  const { quiet } = await quietSince(reader, [{ organizationId: other.organizationId, since: ahead }])
  t.same(quiet, [false], 'ahead: the database went back')
  const page = await changesPage(reader, other.organizationId, { since: { seen: ahead, generation: now.generation }, limit: 100, analytics: true })
  t.equal(page.expired, true, 'as a page finds it expired')
  const found = await quietSince(reader, [{ organizationId: other.organizationId, since: now.since }])
  t.equal(found.generation, now.generation, 'the generation, for the caller to compare')
  t.same(await quietSince(reader, []).then(r => r.quiet), [], 'no probe: none')
})
