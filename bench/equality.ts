// Before any load: every scenario's request answered by the service and the baseline with
// the same status, the same body bytes and (for 200s) the same ETag, but for analytics,
// whose ETag the service derives from the job's summary version and the baseline from the
// body (each stable, asked twice); the list walked page by page through each server's own
// cursors. Each is asked twice, so an answer that changes
// between two identical requests (e.g. a float sum in a parallel plan) shows too.
import { SignedJson } from '../src/signed-json.js'
import { LIST_PAGES, nextPage, SIDES, type Paths, type Probe, type Side } from './scenarios.js'
import { CURSOR_SECRET } from './servers.js'

interface Answer { status: number, body: Buffer, etag: string | undefined, headers: string }

// Headers that matter to a client, besides the ETag. (Not the content type of a 304, which
// has no content: the service sends one, the baseline does not.)
const HEADERS = ['content-type', 'cache-control']

export class EqualityError extends Error {}

async function get (base: string, path: string, requestHeaders: Record<string, string>): Promise<Answer> {
  const res = await fetch(base + path, { headers: requestHeaders })
  const headers = HEADERS.filter(h => res.status !== 304 || h !== 'content-type').map(h => `${h}: ${res.headers.get(h) ?? '(none)'}`).join(', ')
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), etag: res.headers.get('etag') ?? undefined, headers }
}

const CONTEXT = 80

/** The two bodies, or around their first difference when they are long. */
function bodyDifference (a: Buffer, b: Buffer, labels: [string, string]): string {
  if (a.length + b.length <= 3000) return `  ${labels[0]}: ${a.toString()}\n  ${labels[1]}: ${b.toString()}`
  let at = 0
  while (at < a.length && at < b.length && a[at] === b[at]) at++
  const around = (x: Buffer): string => JSON.stringify(x.subarray(Math.max(0, at - CONTEXT), at + CONTEXT).toString())
  return `  first difference at byte ${at} (lengths ${a.length} and ${b.length}), ±${CONTEXT} bytes:\n  ${labels[0]}: ${around(a)}\n  ${labels[1]}: ${around(b)}`
}

// The servers' cursors, opened as the service opens them (signature checked).
const cursors = new SignedJson(CURSOR_SECRET)

/**
 * A list page's body with its next_cursor's payload in place of the cursor, less the snapshot
 * (`x`) the walk's sync token will hold: that snapshot moves with every transaction of the
 * cluster (autovacuum's, another database's), so two asks a moment apart may differ there
 * alone. Every other body, and a cursor that does not open, as it is.
 */
function withoutSnapshot (body: Buffer): Buffer {
  let page: unknown
  try { page = JSON.parse(body.toString()) } catch { return body }
  const cursor = (page as { next_cursor?: unknown } | null)?.next_cursor
  const payload = typeof cursor === 'string' ? cursors.open(cursor) : undefined
  if (payload === undefined) return body
  delete payload.x
  return Buffer.from(JSON.stringify({ ...(page as object), next_cursor: payload }))
}

function difference (what: string, a: Answer, b: Answer, labels: [string, string], sameEtag = true): string | undefined {
  if (a.status !== b.status) return `${what}: status ${a.status} vs ${b.status}\n${bodyDifference(a.body, b.body, labels)}`
  const identical = a.body.equals(b.body)
  if (!identical && !withoutSnapshot(a.body).equals(withoutSnapshot(b.body))) return `${what}: bodies differ\n${bodyDifference(a.body, b.body, labels)}`
  // The ETag hashes the body: equal only where the bodies are, snapshot included.
  if (a.status === 200 && (sameEtag && identical ? a.etag !== b.etag : a.etag === undefined || b.etag === undefined)) return `${what}: ETag ${a.etag} vs ${b.etag}`
  if (a.headers !== b.headers) return `${what}: headers differ\n  ${labels[0]}: ${a.headers}\n  ${labels[1]}: ${b.headers}`
  return undefined
}

export async function checkEquality (urls: Record<Side, string>, apiKey: string, paths: Paths): Promise<Probe> {
  const auth = { authorization: `Bearer ${apiKey}` }
  const problems: string[] = []
  let checked = 0

  /** Both servers, twice each; their first answers, and whether all was as expected. */
  async function compare (what: string, pathOf: Record<Side, string>, expected = 200, headers: Record<Side, Record<string, string>> = { service: auth, baseline: auth }, sameEtag = true): Promise<Record<Side, Answer> & { ok: boolean }> {
    const ask = async (side: Side): Promise<Answer> => await get(urls[side], pathOf[side], headers[side])
    const [s1, b1, s2, b2] = [await ask('service'), await ask('baseline'), await ask('service'), await ask('baseline')]
    checked++
    const found = difference(what, s1, b1, ['service ', 'baseline'], sameEtag) ??
      difference(`${what} (service asked twice)`, s1, s2, ['service 1', 'service 2']) ??
      difference(`${what} (baseline asked twice)`, b1, b2, ['baseline 1', 'baseline 2']) ??
      (s1.status !== expected ? `${what}: both answered ${s1.status}, expected ${expected}\n  ${s1.body.toString()}` : undefined) ??
      (expected === 304 && s1.body.length > 0 ? `${what}: a 304 with a body of ${s1.body.length} bytes` : undefined)
    if (found !== undefined) problems.push(found)
    return { service: s1, baseline: b1, ok: found === undefined }
  }

  const both = (path: string): Record<Side, string> => ({ service: path, baseline: path })
  const small = await compare('get job (200 screens)', both(paths.smallJob))
  await compare('get job (100k screens)', both(paths.bigJob))
  const analytics = async (what: string, path: string) => await compare(what, both(path), 200, undefined, false)
  await analytics('analytics (200 screens)', paths.smallAnalytics)
  await analytics('analytics (100k screens)', paths.bigAnalytics)
  await analytics('analytics (100k, tz=Europe/Berlin)', paths.bigAnalyticsBerlin)
  await compare('get job (1M screens)', both(paths.hugeJob))
  const huge = await analytics('analytics (1M screens)', paths.hugeAnalytics)
  await analytics('analytics (1M, tz=Asia/Kathmandu)', paths.hugeAnalyticsKathmandu)
  await analytics('analytics (1M, tz=Europe/Berlin)', paths.hugeAnalyticsBerlin)
  await analytics('analytics (1M, tz=America/New_York)', paths.hugeAnalyticsNewYork)

  // The list: page 1, then each server's own next_cursor, up to page LIST_PAGES.
  const path: Record<Side, string> = both(paths.firstPage)
  const cursor = { service: '', baseline: '' }
  for (let page = 1; page <= LIST_PAGES; page++) {
    const answers = await compare(`list page ${page}`, path)
    if (!answers.ok) break // the cursors differ from here on
    for (const side of SIDES) {
      const next = (JSON.parse(answers[side].body.toString()) as { next_cursor: string | null }).next_cursor
      if (page === LIST_PAGES) continue
      if (next === null) throw new EqualityError(`list page ${page} is the last one: the dataset needs ${LIST_PAGES} pages`)
      cursor[side] = next
      path[side] = nextPage(next)
    }
  }

  // The conditional get: each server's own ETag (equal, checked above) gets a 304, no body.
  const etag = { service: small.service.etag ?? '', baseline: small.baseline.etag ?? '' }
  await compare('304 conditional get', both(paths.smallJob), 304, { service: { ...auth, 'if-none-match': etag.service }, baseline: { ...auth, 'if-none-match': etag.baseline } })
  const hugeAnalyticsEtag = { service: huge.service.etag ?? '', baseline: huge.baseline.etag ?? '' }
  await compare('304 analytics (1M screens)', both(paths.hugeAnalytics), 304,
    { service: { ...auth, 'if-none-match': hugeAnalyticsEtag.service }, baseline: { ...auth, 'if-none-match': hugeAnalyticsEtag.baseline } }, false)

  if (problems.length > 0) throw new EqualityError(`${problems.length} difference(s):\n\n${problems.join('\n\n')}`)
  console.log(`  ${checked} requests, each asked twice of both servers: same status, body and ETag (analytics: each server's own, stable)`)
  return { etag, lastCursor: cursor, hugeAnalyticsEtag }
}
