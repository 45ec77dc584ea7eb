import { readFileSync } from 'node:fs'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

// Every response a test receives through the test app is checked against the committed
// OpenAPI document: the status must be documented for the operation, the body must match
// its schema (additionalProperties are false: an undocumented field fails), documented
// headers must match theirs, required ones must be there, and a 304 has no body.

interface Header { required?: boolean, schema: Record<string, unknown> }
interface ResponseObject { headers?: Record<string, Header>, content?: Record<string, unknown> }
interface Operation { operationId: string, responses: Record<string, ResponseObject> }
interface Document { paths: Record<string, Record<string, Operation>> }

const document = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')) as Document
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
;(addFormats as unknown as (a: Ajv2020) => void)(ajv)
ajv.addSchema(document as object, 'openapi')

const routes = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({
  method: method.toUpperCase(),
  path,
  pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
  operation,
})))

const pointer = (...segments: string[]): string =>
  'openapi#/' + segments.map(s => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')

export interface ObservedResponse {
  method: string
  url: string
  statusCode: number
  headers: Record<string, string | string[] | number | undefined>
  body: string
}

/** Problems with a response against the document; empty when it conforms or is not an operation's. */
export function contractProblems (res: ObservedResponse): string[] {
  // The path as sent: clients (fetch, inject) resolve dot segments first (RFC 3986), so
  // `/api/jobs/.` reaches the server as `/api/jobs/`, the list.
  const path = new URL(res.url.split('?')[0] ?? '', 'http://client.invalid').pathname
  const route = routes.find(r => r.method === res.method && r.pattern.test(path))
  // Not a documented operation (health, docs, unknown routes); HEAD mirrors GET without a body.
  if (route === undefined) return []
  const where = `${res.method} ${path} → ${res.statusCode}`
  const documented = route.operation.responses[String(res.statusCode)]
  if (documented === undefined) return [`${where}: status ${res.statusCode} is not documented for ${route.operation.operationId}`]
  const problems: string[] = []
  // Headers that must be there (a header object cannot say "required" in this document):
  // decisions.md's x-request-id everywhere, the ETag on 200s, the challenge on 401s, the
  // wait on 429s and 503s.
  const mustHave = ['x-request-id', ...({ 200: ['etag', 'cache-control'], 304: ['etag'], 401: ['www-authenticate'], 429: ['retry-after', 'x-ratelimit-limit'], 503: ['retry-after'] } as Record<number, string[]>)[res.statusCode] ?? []]
  for (const name of mustHave) {
    // /api/me is not cacheable (it has no ETag): the rule for 200s is for the job operations.
    if ((name === 'etag' || name === 'cache-control') && route.operation.operationId === 'getMe') continue
    if (res.headers[name] === undefined) problems.push(`${where}: ${name} is missing`)
  }
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    const raw = res.headers[name.toLowerCase()]
    if (raw === undefined) {
      if (header.required === true) problems.push(`${where}: required header ${name} is missing`)
      continue
    }
    const value = header.schema.type === 'integer' && /^-?\d+$/.test(String(raw)) ? Number(raw) : String(raw)
    if (!ajv.validate(header.schema, value)) problems.push(`${where}: header ${name}=${String(raw)} ${ajv.errorsText()}`)
  }
  if (documented.content === undefined) {
    if (res.body !== '') problems.push(`${where}: a body where none is documented`)
    return problems
  }
  let body: unknown
  try { body = JSON.parse(res.body) } catch { return [...problems, `${where}: body is not JSON`] }
  const validate = ajv.getSchema(pointer('paths', route.path, route.method.toLowerCase(), 'responses', String(res.statusCode), 'content', 'application/json', 'schema'))
  if (validate === undefined) return [...problems, `${where}: no schema found`]
  if (!validate(body)) problems.push(`${where}: body ${ajv.errorsText(validate.errors)}`)
  return problems
}

export class ContractError extends Error {}

/** Throws when a response breaks the document. */
export function assertContract (res: ObservedResponse): void {
  const problems = contractProblems(res)
  if (problems.length > 0) throw new ContractError(`Response breaks openapi/openapi.json:\n  ${problems.join('\n  ')}`)
}
