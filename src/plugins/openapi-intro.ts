import { SCOPE_DESCRIPTIONS, SCOPES } from '../auth/scopes.js'
import { ConfigSchema } from '../config.js'
import { HEADERS_TIMEOUT_MS, MAX_HEADER_BYTES, MAX_PARAM_LENGTH, MAX_QUERY_LENGTH, MAX_URL_LENGTH } from '../limits.js'

// The document's intro (info.description), Swagger UI's first screen: written for a partner
// who integrates with the API, so it names no operator's command or environment variable
// (test/e2e/swagger-ui.test.ts checks it mentions every family and lists every scope).

const scopeList = SCOPES.map(scope => `- \`${scope}\`: ${SCOPE_DESCRIPTIONS[scope]}`).join('\n')

export const INTRO = `Read API of the recruitment screening service, for the organization an API key belongs to.

**What it does.**
- **Jobs**: list the organization's jobs page by page, and get one job with its counts and average score.
- **Sync**: the same list, asked for what changed since your last walk.
- **Analytics** (Pro plan): completion and score analytics of a job, of many jobs in one call, and of the whole organization.
- **Webhook endpoints**: register a URL and the service POSTs the organization's job changes to it; list its deliveries, redeliver or recover events. The events themselves are listed under **Webhooks** at the end.
- **Account**: \`GET /api/me\`, the key's user, organization, plan, entitlements and scopes.

**Getting a key.** Ask your organization's admin for an API key (\`srk_…\`), limited to the scopes your integration needs. Click **Authorize**, paste the key, then **Try it out** on any operation. Every \`/api\` operation takes \`Authorization: Bearer <api key>\`; a missing, unknown, revoked or expired key gets 401. A key only sees its own organization: another organization's job is reported exactly like a missing one (404).

**Scopes.** Each operation names the scope it needs in its security requirement (\`bearerAuth: ['jobs:read']\`):
${scopeList}

\`GET /api/me\` needs none and lists the key's \`scopes\`. A key without the operation's scope gets 403 \`insufficient_scope\` with \`required_scope\`, decided from the key alone. Keys made without a choice have every scope.

**Sync.** Walk \`GET /api/jobs\` without \`status\` to its last page, which carries a \`sync_token\`. Later, \`GET /api/jobs?changed_since=<sync_token>\` pages through every job that changed since, as it is now, with the ids of deleted jobs in \`deleted_ids\`, and its last page carries the next token. Nothing is missed; a job may come twice. A token the service can no longer answer is 410 \`sync_token_expired\`: walk again from the first page.

**Webhooks.** Instead of polling, create an endpoint (\`POST /api/webhook_endpoints\`, scope \`webhooks:write\`) with your URL and the events you want; keep the \`secret\` it answers once. Each change is POSTed to your URL as JSON signed per Standard Webhooks (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`; the SDK's \`verifyWebhook\` checks them), at least once and in no guaranteed order: answer 2xx quickly and deduplicate on \`webhook-id\`. Failed deliveries are retried; \`sync.reset\` tells you to walk the list again. The event bodies are under **Webhooks** below.

**Errors.** Every error is JSON of one shape, \`{ "error": "<message>", "code": "<machine code>", "request_id": "<id>" }\`, plus fields of that error (\`details\` on 400, \`upgrade_url\` on 403). Switch on \`code\`, not on the message.

**Request ids.** Every response carries \`x-request-id\`: the one the request sent, when it is 1 to 128 characters of \`A-Z a-z 0-9 . _ : -\`, or a generated one. Quote it when reporting a problem.

**Rate limits.** Each API key has a budget of requests per window (600 a minute unless your deployment says otherwise), shared by every operation. Responses carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (seconds); past the limit, 429 \`rate_limited\` with \`Retry-After\`.

**Limits.** A URL may be ${MAX_URL_LENGTH} characters long (its query string ${MAX_QUERY_LENGTH}, a path segment ${MAX_PARAM_LENGTH}), or the answer is 414 \`uri_too_long\`; the request line and headers may take ${MAX_HEADER_BYTES} bytes (431 \`headers_too_large\`) and must arrive within ${HEADERS_TIMEOUT_MS / 1000} s (408 \`request_timeout\`); a page of jobs holds 1 to 100 (\`limit\`). Every request is answered within a bound (${ConfigSchema.properties.REQUEST_TIMEOUT_MS.default / 1000} s unless your deployment says otherwise); past it, or while the service is unavailable, 503 \`unavailable\` with \`Retry-After\`.

**Conditional requests.** Every 200 of a GET carries an \`ETag\` and \`Cache-Control: private, no-cache\`. Send the ETag back in \`If-None-Match\`: while nothing changed, the answer is 304 with no body (it still counts toward the rate limit). Dashboards that poll should do this.`

/** The Authorize dialog's text (the bearer scheme's description). */
export const BEARER_DESCRIPTION = `An API key of your organization, e.g. \`srk_AbCd1234_…\`: ask your organization's admin for one, with the scopes your integration needs (${SCOPES.map(s => `\`${s}\``).join(', ')}; \`x-scopes\` says what each allows). Paste the key alone, without \`Bearer\`. The roles of an operation's requirement are the scopes the key needs.`

// Swagger UI's look: an expanded operation documents a dozen statuses, each with the headers
// every response carries; their tables and examples scroll within a bounded height so that
// the operation stays readable (the browser test bounds the expanded get job).
export const SWAGGER_UI_CSS = `.swagger-ui .responses-table:not(.live-responses-table) .headers-wrapper { max-height: 7.5em; overflow-y: auto; }
.swagger-ui .responses-table:not(.live-responses-table) .headers-wrapper h4 { margin: 0; }
.swagger-ui .responses-table:not(.live-responses-table) .response-col_description .highlight-code > pre { max-height: 12em; }
.swagger-ui .responses-table:not(.live-responses-table) .response-controls, .swagger-ui .responses-table:not(.live-responses-table) .response-col_description__inner p { margin: 0; }`
