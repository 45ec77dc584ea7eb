// W3C Trace Context's `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header):
// version-traceid-parentid-flags in lowercase hex. Read only as far as the log needs; written
// for a span (traceresponse, a webhook attempt's header).

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

/** The `traceparent` naming a span (W3C version 00: sampled or not, no more flags). */
export const traceparentOf = ({ traceId, spanId, traceFlags }: { traceId: string, spanId: string, traceFlags: number }): string =>
  `00-${traceId}-${spanId}-${(traceFlags & 1) === 1 ? '01' : '00'}`
