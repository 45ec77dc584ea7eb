import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * The credential of `Authorization: Bearer <credential>`: the scheme case-insensitive (RFC
 * 9110), then one or more spaces, then the rest without its trailing spaces. Undefined for
 * any other header, or none.
 *
 * Found by index, not by a regular expression: the header is the caller's, and a pattern
 * such as /^bearer +(.+?) *$/ backtracks quadratically on a run of spaces (16 KB of them
 * held the event loop for a quarter of a second). This is one pass, whatever is sent.
 */
export function bearerCredential (header: string | undefined): string | undefined {
  if (header === undefined || header.length < 8 || header[6] !== ' ' || header.slice(0, 6).toLowerCase() !== 'bearer') return undefined
  let start = 7
  while (header[start] === ' ') start++
  let end = header.length
  while (end > start && header[end - 1] === ' ') end--
  return end > start ? header.slice(start, end) : undefined
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest()

/**
 * Whether an Authorization header carries `token` as its bearer credential. Digests are
 * compared, not the strings: equal lengths for timingSafeEqual, and the time taken says
 * nothing about the token's length or how much of it a guess got right.
 */
export function bearerMatcher (token: string): (header: string | undefined) => boolean {
  const expected = digest(token)
  return header => {
    const given = bearerCredential(header)
    return given !== undefined && timingSafeEqual(digest(given), expected)
  }
}
