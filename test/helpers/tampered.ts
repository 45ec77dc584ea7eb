/** A signed token (body.signature) with the signature's first character changed. The first
 * character carries 6 whole bits, so the signature always decodes to other bytes; changing its
 * last characters does not (1 in 256 gave the same signature back, and a green run failed). */
export function tampered (token: string): string {
  const dot = token.lastIndexOf('.')
  const first = token[dot + 1]
  return `${token.slice(0, dot + 1)}${first === 'A' ? 'B' : 'A'}${token.slice(dot + 2)}`
}
