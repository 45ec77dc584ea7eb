// Lint of openapi/openapi.json: Spectral's OpenAPI recommended rules plus the OWASP API
// Security ruleset. A rule is switched off only here, with the reason beside it.
import { oas } from '@stoplight/spectral-rulesets'
import owasp from '@stoplight/spectral-owasp-ruleset'

export default {
  extends: [[oas, 'recommended'], [owasp, 'recommended']],
  rules: {
    // Free text (titles, descriptions, messages) has no format or pattern by nature; every
    // string is bounded by a maxLength instead, which owasp:api4:2023-string-limit checks.
    'owasp:api4:2023-string-restricted': 'off',
    // CORS is off: this is a server-to-server API and Swagger UI is served from the same
    // origin, so no response carries Access-Control-Allow-Origin and none is documented.
    'owasp:api8:2023-define-cors-origin': 'off',
    // The committed document has no servers on purpose: the base URL is the deployment's
    // (PUBLIC_URL puts it in the served document), and `/`, the only host-independent
    // entry, made a generator build `//api/me` (docs/decisions.md, "servers").
    'oas3-api-servers': 'off',
  },
}
