// Lint of openapi/openapi.json: Spectral's OpenAPI recommended rules plus the OWASP API
// Security ruleset. A rule is switched off only here, with the reason beside it.
import { oas } from '@stoplight/spectral-rulesets'
import owasp from '@stoplight/spectral-owasp-ruleset'

// OpenAPI 3.1 lets the requirement of any security scheme list roles (here: the scopes an
// API key needs); Spectral's oas3-operation-security-defined predates that and flags every
// role of a non-OAuth scheme. This is the same check with the roles of a scheme read from
// its `x-scopes` (the document's list of scopes, with what each allows).
function securityDefined (requirements, _options, { document, path }) {
  const schemes = document.data?.components?.securitySchemes ?? {}
  const results = []
  for (const [i, requirement] of (Array.isArray(requirements) ? requirements : []).entries()) {
    for (const [name, roles] of Object.entries(requirement ?? {})) {
      const scheme = schemes[name]
      if (scheme === undefined) {
        results.push({ message: `"${name}" is not a scheme of components.securitySchemes.`, path: [...path, i, name] })
        continue
      }
      const known = scheme.type === 'oauth2'
        ? Object.values(scheme.flows ?? {}).flatMap(flow => Object.keys(flow.scopes ?? {}))
        : Object.keys(scheme['x-scopes'] ?? {})
      for (const [j, role] of (roles ?? []).entries()) {
        if (!known.includes(role)) results.push({ message: `"${role}" is not among the scopes of ${name}.`, path: [...path, i, name, j] })
      }
    }
  }
  return results
}

export default {
  extends: [[oas, 'recommended'], [owasp, 'recommended']],
  rules: {
    // Free text (titles, descriptions, messages) has no format or pattern by nature; every
    // string is bounded by a maxLength instead, which owasp:api4:2023-string-limit checks.
    'owasp:api4:2023-string-restricted': 'off',
    // CORS is off: this is a server-to-server API and Swagger UI is served from the same
    // origin, so no response carries Access-Control-Allow-Origin and none is documented.
    'owasp:api8:2023-define-cors-origin': 'off',
    // Replaced by security-roles-defined, which knows the roles of a bearer scheme (above).
    'oas3-operation-security-defined': 'off',
    'security-roles-defined': {
      description: 'Every security requirement names a defined scheme and roles that scheme defines.',
      message: '{{error}}',
      severity: 'error',
      given: ['$.security', '$.paths[*][get,put,post,delete,options,head,patch,trace].security'],
      then: { function: securityDefined },
    },
  },
}
