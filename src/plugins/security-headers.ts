import cors from '@fastify/cors'
import helmet from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Security headers for a JSON API that also serves Swagger UI: Helmet's defaults, with a
 * Content-Security-Policy that lets the UI's own scripts, styles and inline styles and its
 * data: images run, and nothing from elsewhere. CORS is off unless origins are listed.
 */
export default fp(async function securityHeadersPlugin (app: FastifyInstance, { corsOrigins }: { corsOrigins: string[] }) {
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'", 'data:'],
        objectSrc: ["'none'"],
        frameAncestors: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
      },
    },
    // The JSON API is fetched cross-origin by nobody unless CORS allows it; keep the default
    // same-origin resource policy.
  })
  if (corsOrigins.length > 0) {
    await app.register(cors, { origin: corsOrigins, methods: ['GET', 'HEAD'], allowedHeaders: ['Authorization', 'If-None-Match', 'X-Request-Id'], exposedHeaders: ['ETag', 'X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'], maxAge: 600 })
  }
}, { name: 'security-headers' })
