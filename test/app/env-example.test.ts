import { readFileSync } from 'node:fs'
import t from 'tap'
import { ConfigSchema, loadConfig } from '../../src/config.js'

// .env.example documents every variable of src/config.ts, with its default as the value and
// its description as the comment above it: this keeps the two from drifting apart.

interface Entry { name: string, value: string, comment: string }

function parse (text: string): Entry[] {
  const entries: Entry[] = []
  let comment: string[] = []
  for (const line of text.split('\n')) {
    const assignment = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line)
    if (assignment !== null) {
      entries.push({ name: assignment[1]!, value: assignment[2]!, comment: comment.join(' ') })
      comment = []
    } else if (line.startsWith('#')) {
      comment.push(line.replace(/^#\s?/, ''))
    } else {
      comment = []
    }
  }
  return entries
}

const entries = parse(readFileSync('.env.example', 'utf8'))
const schemas = ConfigSchema.properties as Record<string, { default?: unknown, description?: string }>

t.test('every variable of the config schema, once, in its order, and nothing else', async t => {
  t.same(entries.map(e => e.name), Object.keys(schemas))
})

t.test('each value is the default (empty when there is none)', async t => {
  for (const { name, value } of entries) {
    const fallback = schemas[name]?.default
    t.equal(value, fallback === undefined ? '' : String(fallback), name)
  }
})

t.test('each comment starts with the schema\'s description', async t => {
  for (const { name, comment } of entries) {
    const description = schemas[name]?.description
    t.ok(description, `${name} has a description in src/config.ts`)
    t.ok(comment.startsWith(description!.replace(/\.$/, '')), `${name}: "${comment}" starts with "${description}"`)
  }
})

t.test('loaded as an environment, the file is a valid configuration: the defaults', async t => {
  const env = Object.fromEntries(entries.map(e => [e.name, e.value]))
  t.same(loadConfig(env), loadConfig({}))
})
