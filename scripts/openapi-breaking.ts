// npm run openapi:breaking: fails when openapi/openapi.json breaks openapi/baseline.json (the
// last released document) unless info.version's major part was raised. The diff comes from
// openapi-schema-diff (Fastify's); which differences break a client is decided here.
// After a release: cp openapi/openapi.json openapi/baseline.json
import { readFileSync } from 'node:fs'
import compare from 'openapi-schema-diff'

interface Doc { info: { version: string } }
interface SchemaChange { jsonPath: string, source?: unknown, target?: unknown }
interface Change { type: string, action: string, name?: string, statusCode?: string, targetSchema?: { required?: boolean }, changes?: Array<{ keyword: string, source?: unknown, target?: unknown, changes?: SchemaChange[] }> }

/** What in the target breaks a client written against the source; empty when nothing does. */
export function breakingChanges (source: object, target: object): string[] {
  const diff = compare(source, target) as {
    deletedRoutes: Array<{ method: string, path: string }>
    changedRoutes: Array<{ method: string, path: string, changes: Change[] }>
  }
  const found: string[] = diff.deletedRoutes.map(r => `${r.method.toUpperCase()} ${r.path}: operation removed`)
  for (const route of diff.changedRoutes) {
    const where = `${route.method.toUpperCase()} ${route.path}`
    for (const change of route.changes) {
      const what = change.type === 'parameter' ? `parameter ${change.name ?? ''}` : `${change.type} ${change.statusCode ?? ''}`.trim()
      if (change.action === 'deleted') { found.push(`${where}: ${what} removed`); continue }
      if (change.action === 'added') {
        if (change.type === 'parameter' && change.targetSchema?.required === true) found.push(`${where}: new required ${what}`)
        continue
      }
      const response = change.type.startsWith('response')
      for (const keyword of change.changes ?? []) {
        if (keyword.keyword === 'required' && keyword.source !== true && keyword.target === true) found.push(`${where}: ${what} became required`)
        // `required` lists are diffed index by index: compare them as sets, per schema.
        const required = new Map<string, { source: Set<unknown>, target: Set<unknown> }>()
        for (const c of keyword.changes ?? []) {
          const path = c.jsonPath.replace(/^#/, '')
          const list = /^(.*)\/required\/\d+$/.exec(path)
          if (list !== null) {
            const sets = required.get(list[1]!) ?? { source: new Set(), target: new Set() }
            if (c.source !== undefined) sets.source.add(c.source)
            if (c.target !== undefined) sets.target.add(c.target)
            required.set(list[1]!, sets)
          } else if (/\/properties\/[^/]+$/.test(path) && c.target === undefined && response) found.push(`${where}: ${what}: field ${path} removed`)
          else if (/\/type$/.test(path) && c.source !== undefined) found.push(`${where}: ${what}: type of ${path.replace(/\/type$/, '') || 'body'} changed from ${JSON.stringify(c.source)} to ${JSON.stringify(c.target)}`)
          else if (/\/enum(\/\d+)?$/.test(path) && c.source !== undefined) found.push(`${where}: ${what}: enum value ${JSON.stringify(c.source)} removed or changed at ${path}`)
        }
        for (const [schema, { source, target }] of required) {
          // A response field that may now be absent, or a request field that must now be sent.
          const removed = [...source].filter(v => !target.has(v))
          const added = [...target].filter(v => !source.has(v))
          if (response) for (const f of removed) found.push(`${where}: ${what}: ${JSON.stringify(f)} no longer always present (${schema || 'body'})`)
          else for (const f of added) found.push(`${where}: ${what}: ${JSON.stringify(f)} newly required (${schema || 'body'})`)
        }
      }
    }
  }
  return found
}

const major = (doc: Doc): number => Number(doc.info.version.split('.')[0])

if (import.meta.url === `file://${process.argv[1]}`) {
  const read = (name: string): Doc => JSON.parse(readFileSync(new URL(`../openapi/${name}`, import.meta.url), 'utf8')) as Doc
  const [baseline, current] = [read('baseline.json'), read('openapi.json')]
  const breaking = breakingChanges(baseline, current)
  if (breaking.length === 0) {
    console.log(`openapi/openapi.json (${current.info.version}) does not break openapi/baseline.json (${baseline.info.version}).`)
  } else if (major(current) > major(baseline)) {
    console.log(`${breaking.length} breaking change(s), allowed by the major version ${baseline.info.version} -> ${current.info.version}:\n  ${breaking.join('\n  ')}`)
  } else {
    console.error(`openapi/openapi.json breaks openapi/baseline.json:\n  ${breaking.join('\n  ')}\nMake the change additive, or raise the major version in package.json (then npm run openapi).`)
    process.exitCode = 1
  }
}
