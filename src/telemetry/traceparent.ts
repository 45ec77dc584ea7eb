// W3C Trace Context's `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header):
// version-traceid-parentid-flags in lowercase hex. Read only as far as the log needs.

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[^]*)?$/
const ZEROS = /^0+$/

/** The trace id a valid `traceparent` names; undefined for none, a malformed one or an all-zero id. */
export function traceIdOf (header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined
  const match = TRACEPARENT.exec(header.trim())
  if (match === null) return undefined
  const [, version, traceId, parentId, , rest] = match as unknown as [string, string, string, string, string, string | undefined]
  // Version ff is invalid; version 00 has nothing after the flags; a later one may.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  return ZEROS.test(traceId) || ZEROS.test(parentId) ? undefined : traceId
}
