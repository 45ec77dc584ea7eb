import { LRUCache } from 'lru-cache'

// The last analytics answer given for each question (job, rules, zone, range, compare; the
// release is the process's), with the version of the job's figures it was computed at. One
// cache for the single job, the batch (whose entries are the single job's answers) and the rollup. The ETag says
// the answer is the same while that version is, so a repeated question costs the version's
// read (the job's summary rows and unfolded deltas, not its screens) instead of the figures';
// a kept answer is never given without that read, which is scoped to the caller's organization.
// "Least recently asked": looked up, whether or not the answer was then given. Kept as the bytes
// sent: a text built of many pieces is flattened and encoded again on every send (a kept batch
// of 50: half the service's CPU, --cpu-prof; docs/decisions.md, "Dashboards: answers kept").

export interface CachedAnswer { version: string, body: Buffer }

/**
 * The UTF-8 bytes of `text` (or `text` itself) in a buffer of their own, not a slice of Node's
 * shared pool, which a kept slice would hold on to.
 */
export function bytesOf (text: string | Buffer): Buffer {
  if (typeof text !== 'string' && text.byteOffset === 0 && text.buffer.byteLength === text.length) return text
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text))
  if (typeof text === 'string') bytes.write(text)
  else text.copy(bytes)
  return bytes
}

/** A job's analytics question: what the single job's answer (and a batch's entry) depends on besides the version. */
export const jobQuestion = (jobId: string, rulesId: string, zone: string, from = '', to = '', compare = ''): string =>
  `${jobId}|${rulesId}|${zone}|${from}|${to}|${compare}`

export class AnswerCache {
  private readonly answers: LRUCache<string, CachedAnswer> | undefined

  /** `maxBytes`: the answers' bytes at most (0: nothing kept); the least recently asked go first. */
  constructor (maxBytes: number) {
    this.answers = maxBytes === 0
      ? undefined
      : new LRUCache({ maxSize: maxBytes, sizeCalculation: (answer, question) => Math.max(1, answer.body.length + 2 * (answer.version.length + question.length)) })
  }

  /** The answer last given to `question`, whatever its version (the caller checks it). */
  get (question: string): CachedAnswer | undefined { return this.answers?.get(question) }

  /** Keeps `text` as the answer to `question` at `version`; its bytes, to be sent. */
  keep (question: string, version: string, text: string | Buffer): Buffer {
    const body = bytesOf(text)
    this.answers?.set(question, { version, body })
    return body
  }
}
