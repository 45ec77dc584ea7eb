import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// Sizes the docs and the sources stay within (issue 58): the README a front door, the map a
// map, the cost model the current figures only (run histories go to bench/results/), each
// folder's README one page, and no source file longer than a reader holds in mind at once.

const root = fileURLToPath(new URL('../../', import.meta.url))

/** Lines as `wc -l` counts them: newline characters. */
const lines = (path: string): number => (readFileSync(root + path, 'utf8').match(/\n/g) ?? []).length

const docs: Array<[path: string, most: number, where: string]> = [
  ['README.md', 300, 'the front door: details go to docs/ or bench/README.md'],
  ['docs/architecture.md', 150, 'a map: explanations go to the design pages or the folders\' READMEs'],
  ['docs/performance.md', 200, 'the current cost model: a run\'s history goes to bench/results/'],
  ['src/webhooks/README.md', 100, 'one page'],
  ['src/changes/README.md', 100, 'one page'],
]

t.test('each doc within its size', async t => {
  for (const [path, most, where] of docs) {
    if (!existsSync(root + path)) { t.fail(`${path} is missing`); continue }
    const count = lines(path)
    t.ok(count <= most, `${path}: ${count} lines, at most ${most} (${where})`)
  }
})

t.test('every source file of src/ (src/generated/ aside) within 200 lines', async t => {
  const sources = readdirSync(root + 'src', { recursive: true, encoding: 'utf8' })
    .filter(file => file.endsWith('.ts') && !file.startsWith('generated/'))
    .map(file => `src/${file}`)
    .sort()
  t.ok(sources.length > 100, `${sources.length} files read`)
  const over = sources.map(path => ({ path, count: lines(path) })).filter(({ count }) => count > 200)
  t.same(over.map(({ path, count }) => `${path}: ${count} lines`), [], 'none over 200 lines: split what a file holds by what each part is about')
})
