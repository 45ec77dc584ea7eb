import t from 'tap'
import { ConfigSchema } from '../../src/config.js'
import { buildTestApp } from '../helpers/app.js'

const { app } = await buildTestApp(t)
const res = await app.inject({ url: '/openapi.json' })
const doc = res.json()

t.test('served as OpenAPI 3.1 with the package version', async t => {
  t.equal(res.statusCode, 200)
  t.equal(doc.openapi, '3.1.0')
  t.equal(doc.info.version, (await import('../../package.json', { with: { type: 'json' } })).default.version)
})

// The scope each operation needs (issue 24), named as a role of its bearer requirement.
const SCOPE_OF: Record<string, string[]> = {
  getMe: [],
  getJob: ['jobs:read'],
  listJobs: ['jobs:read'],
  getJobAnalytics: ['analytics:read'],
  getJobsAnalytics: ['analytics:read'],
  getOrganizationAnalytics: ['analytics:read'],
  // Webhooks (issue 41): an endpoint is told what its key reads, so making or enabling one needs jobs:read too.
  createWebhookEndpoint: ['webhooks:write', 'jobs:read'],
  listWebhookEndpoints: ['webhooks:read'],
  getWebhookEndpoint: ['webhooks:read'],
  updateWebhookEndpoint: ['webhooks:write', 'jobs:read'],
  deleteWebhookEndpoint: ['webhooks:write'],
  rotateWebhookSecret: ['webhooks:write'],
  listWebhookDeliveries: ['webhooks:read'],
  redeliverWebhookEvent: ['webhooks:write'],
  recoverWebhookEvents: ['webhooks:write'],
  testWebhookEndpoint: ['webhooks:write'],
  listWebhookEventTypes: ['webhooks:read'],
}

t.test('a bearer security scheme, required by every /api operation, with the scope each needs', async t => {
  t.same(doc.components.securitySchemes.bearerAuth, {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'API key',
    description: doc.components.securitySchemes.bearerAuth.description,
    'x-scopes': Object.fromEntries(['jobs:read', 'analytics:read', 'webhooks:read', 'webhooks:write'].map(scope => [scope, doc.components.securitySchemes.bearerAuth['x-scopes'][scope]])),
  })
  const seen: string[] = []
  for (const [path, item] of Object.entries<Record<string, { operationId: string, security?: unknown, responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>(doc.paths)) {
    t.ok(path.startsWith('/api/'), `${path} is an API path (health and docs are hidden)`)
    for (const [method, op] of Object.entries(item)) {
      const scopes = SCOPE_OF[op.operationId]
      t.ok(scopes, `${op.operationId} has a known scope`)
      seen.push(op.operationId)
      t.same(op.security, [{ bearerAuth: scopes }], `${method} ${path} requires the bearer key${scopes!.length > 0 ? ` with ${scopes!.join(', ')}` : ''}`)
      t.ok(op.responses['401'], `${method} ${path} documents 401`)
      if (scopes!.length > 0) {
        t.match(JSON.stringify(op.responses['403']?.content?.['application/json']?.schema), /#\/components\/schemas\/InsufficientScope/, `${method} ${path} documents 403 insufficient_scope`)
      }
    }
  }
  t.same(seen.sort(), Object.keys(SCOPE_OF).sort(), 'every operation, each once')
})

t.test('the events an endpoint is sent are in `webhooks` (OpenAPI 3.1), signed per Standard Webhooks', async t => {
  t.same(Object.keys(doc.webhooks).sort(), ['job.deleted', 'job.updated', 'sync.reset', 'webhook.test', 'webhook_endpoint.disabled', 'webhook_endpoint.failing'])
  for (const [type, item] of Object.entries<{ post: { requestBody: { content: Record<string, { schema: unknown, example: { type: string } }> }, parameters: Array<{ name: string, in: string, required: boolean }> } }>(doc.webhooks)) {
    const body = item.post.requestBody.content['application/json']!
    t.same(body.schema, { $ref: '#/components/schemas/WebhookEvent' }, `${type}: the WebhookEvent body`)
    t.equal(body.example.type, type)
    t.same(item.post.parameters.map(p => [p.name, p.in, p.required]), [['webhook-id', 'header', true], ['webhook-timestamp', 'header', true], ['webhook-signature', 'header', true]], `${type}: the signature's headers`)
  }
})

t.test('shared schemas appear under their own names', async t => {
  for (const name of ['ApiError', 'ErrorDetail', 'UpgradeRequired', 'InsufficientScope', 'Me', 'Job']) t.ok(doc.components.schemas[name], name)
  t.notOk(Object.keys(doc.components.schemas).some(k => k.startsWith('def-')), 'no anonymous def-N')
  t.same(doc.paths['/api/me'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Me' })
  t.same(doc.paths['/api/me'].get.responses['401'].content['application/json'].schema, { $ref: '#/components/schemas/ApiError' })
})

t.test('Swagger UI is served at /docs', async t => {
  const page = await app.inject({ url: '/docs/' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /text\/html/)
  t.match(page.body, /swagger-ui/i)
  const init = await app.inject({ url: '/docs/static/swagger-initializer.js' })
  t.equal(init.statusCode, 200)
  t.match(init.body, /persistAuthorization/)
})

t.test('servers: `/` always (the origin the document is served from), after PUBLIC_URL when set', async t => {
  const sameOrigin = { url: '/', description: 'The origin this document is served from (local or production)', 'x-internal': false }
  t.same(doc.servers, [sameOrigin], 'no PUBLIC_URL: the relative entry alone')
  const { app: deployed } = await buildTestApp(t, { env: { PUBLIC_URL: 'https://api.screening.example' } })
  const served = (await deployed.inject({ url: '/openapi.json' })).json()
  t.same(served.servers, [{ url: 'https://api.screening.example', description: 'This deployment (production)', 'x-internal': false }, sameOrigin])
  const committed = (await import('../../openapi/openapi.json', { with: { type: 'json' } })).default as { servers?: unknown }
  t.same(committed.servers, [sameOrigin], 'the committed document has the relative entry (Redocly\'s no-empty-servers)')
})

t.test('the intro and the Authorize dialog are written for a partner: no operator\'s command or variable', async t => {
  for (const text of [doc.info.description, doc.components.securitySchemes.bearerAuth.description] as string[]) {
    t.notMatch(text, /npm run|create-key|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/, 'no npm command, no environment variable')
    t.match(text, /admin/, 'a key comes from the organization\'s admin')
    for (const scope of ['jobs:read', 'analytics:read', 'webhooks:read', 'webhooks:write']) t.match(text, scope)
  }
  t.same(doc.tags.map((tag: { name: string }) => tag.name), ['Jobs', 'Analytics', 'Account', 'Webhook endpoints'], 'one tag per family; none named like the webhooks section, whose events have no tag')
})

t.test('no description names an operator\'s environment variable (src/config.ts): a partner reads the default instead', async t => {
  const text = JSON.stringify(doc)
  const named = Object.keys(ConfigSchema.properties).filter(name => new RegExp(`\\b${name}\\b`).test(text))
  t.ok(Object.keys(ConfigSchema.properties).length > 40, 'every variable of the configuration checked')
  t.same(named, [], 'none in the document (descriptions, examples, error messages)')
})
