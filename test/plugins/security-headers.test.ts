import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createTenant } from '../helpers/fixtures.js'

t.test('security headers on the API and on the docs; CORS off by default', async t => {
  const { app, prisma } = await buildTestApp(t)
  const tenant = await createTenant(prisma)
  for (const url of ['/api/me', '/docs/', '/openapi.json']) {
    const res = await app.inject({ url, headers: { ...tenant.auth, origin: 'https://evil.example' } })
    t.equal(res.headers['x-content-type-options'], 'nosniff', url)
    t.match(res.headers['content-security-policy'], /default-src 'self'/, url)
    t.match(res.headers['content-security-policy'], /frame-ancestors 'none'/, url)
    t.ok(res.headers['strict-transport-security'], url)
    t.equal(res.headers['access-control-allow-origin'], undefined, `${url}: no CORS`)
  }
})

t.test('CORS for listed origins only', async t => {
  const { app, prisma } = await buildTestApp(t, { env: { CORS_ORIGINS: 'https://dashboard.example,https://admin.example' } })
  const tenant = await createTenant(prisma)
  const ok = await app.inject({ url: '/api/me', headers: { ...tenant.auth, origin: 'https://dashboard.example' } })
  t.equal(ok.headers['access-control-allow-origin'], 'https://dashboard.example')
  t.match(ok.headers['access-control-expose-headers'], /ETag/)
  const no = await app.inject({ url: '/api/me', headers: { ...tenant.auth, origin: 'https://evil.example' } })
  t.equal(no.headers['access-control-allow-origin'], undefined)
})
