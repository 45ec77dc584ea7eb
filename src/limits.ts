// Every bound on what a request may carry or ask, in one place, below the schemas that document
// them and the plugins and routes that enforce them. The OpenAPI document states them (414,
// 431, 408, the analytics range). The longest legitimate URL of this API is a dashboard's
// batch of 100 job ids (GET /api/analytics/jobs), about 4,500 characters.

/** Path and query string together; longer is a 414. */
export const MAX_URL_LENGTH = 6144
/** The query string alone; longer is a 414. */
export const MAX_QUERY_LENGTH = 5120
/** One path segment, enforced by the router (server-options); longer is a 414. */
export const MAX_PARAM_LENGTH = 500
/** Request line and headers, enforced by Node's HTTP parser (server-options); more is a 431. */
export const MAX_HEADER_BYTES = 16_384
/** For the request line and headers to arrive, enforced by Node (server-options); then a 408. */
export const HEADERS_TIMEOUT_MS = 10_000
/** How often Node looks for connections past HEADERS_TIMEOUT_MS (its default, 30 s, would make it 10 to 40 s). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1000

/** The longest analytics range (`from` to `to`), in calendar years. */
export const MAX_RANGE_YEARS = 5
