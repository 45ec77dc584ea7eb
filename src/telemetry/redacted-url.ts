// Query parameters that carry a credential or a place a caller may resume from (sync tokens,
// list cursors, `changed_since`), printed as [redacted] wherever a URL is logged.

const SECRET_NAME = /token|cursor|secret|password|signature|key|changed_since/i
const REDACTED = '[redacted]'

function redactedPair (pair: string): string {
  const eq = pair.indexOf('=')
  if (eq === -1) return pair
  let name = pair.slice(0, eq)
  try { name = decodeURIComponent(name.replaceAll('+', ' ')) } catch { /* a malformed name is matched as written */ }
  return SECRET_NAME.test(name) ? `${pair.slice(0, eq)}=${REDACTED}` : pair
}

/** `url` (a path and query) with the values of secret-bearing parameters replaced. */
export function redactedUrl (url: string): string {
  const q = url.indexOf('?')
  if (q === -1) return url
  return `${url.slice(0, q + 1)}${url.slice(q + 1).split('&').map(redactedPair).join('&')}`
}
