import { readFileSync } from 'node:fs'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { helmetHeaders } from '../../src/plugins/security-headers.js'

// Every response a test receives through the test app is checked against the committed
// OpenAPI document: the status must be documented for the operation, the body must match
// its schema (additionalProperties are false: an undocumented field fails), every header
// sent must be documented for that status (but those of HTTP itself and the security
// headers every response carries), documented headers must match theirs, required ones
// must be there, Content-Type is one of the documented media types, and a response
// documented without content (a 304) has no body, no Content-Type and no Content-Length.

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

// Headers that are not an operation's to declare: HTTP's own, CORS's (when CORS_ORIGINS
// is set) and Helmet's, which every response of the service carries (docs/decisions.md).
// Content-Type and Content-Length are checked against the documented content instead.
const TRANSPORT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'vary'])
const SECURITY = new Set(Object.keys(helmetHeaders({})))
const undeclarable = (name: string): boolean => TRANSPORT.has(name) || SECURITY.has(name) || name.startsWith('access-control-')

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
  // decisions.md's x-request-id everywhere, the ETag on a GET's 200s (a write's 2xx says
  // `Cache-Control: no-store` instead), the challenge on 401s, the wait on 429s and 503s.
  const read = res.method === 'GET' || res.method === 'HEAD'
  const mustHave = ['x-request-id', ...({ 200: read ? ['etag', 'cache-control'] : ['cache-control'], 201: ['cache-control'], 202: ['cache-control'], 304: ['etag'], 401: ['www-authenticate'], 429: ['retry-after', 'x-ratelimit-limit'], 503: ['retry-after'] } as Record<number, string[]>)[res.statusCode] ?? []]
  if (!read && res.statusCode >= 200 && res.statusCode < 300 && res.statusCode !== 204 && res.headers['cache-control'] !== 'no-store') problems.push(`${where}: a write's answer must say cache-control: no-store`)
  for (const name of mustHave) {
    if (res.headers[name] === undefined) problems.push(`${where}: ${name} is missing`)
  }
  const declared = new Set(Object.keys(documented.headers ?? {}).map(name => name.toLowerCase()))
  for (const name of Object.keys(res.headers)) {
    if (name === 'content-type' || name === 'content-length' || undeclarable(name) || declared.has(name)) continue
    problems.push(`${where}: header ${name} is not documented for this response`)
  }
  const type = res.headers['content-type']
  if (documented.content === undefined) {
    // RFC 9110 §15.4.5: a 304 may carry Content-Length only if it equals the 200's; ours has
    // neither it nor a Content-Type, which would describe a body that is not there.
    if (type !== undefined) problems.push(`${where}: content-type ${String(type)} where no content is documented`)
    if (res.headers['content-length'] !== undefined) problems.push(`${where}: content-length ${String(res.headers['content-length'])} where no content is documented`)
  } else if (type === undefined || !Object.keys(documented.content).includes(String(type).split(';')[0]!.trim())) {
    problems.push(`${where}: content-type ${String(type)} is not one of ${Object.keys(documented.content).join(', ')}`)
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

/** What is wrong with an event body against the published document's WebhookEvent; none when it conforms. */
export function webhookEventProblems (body: unknown): string[] {
  const validate = ajv.getSchema(pointer('components', 'schemas', 'WebhookEvent'))!
  return validate(body) ? [] : (validate.errors ?? []).map(e => `${e.instancePath} ${e.message ?? ''}`)
}
