import { LRUCache } from 'lru-cache'

// The last analytics answer given for each question (job, rules, zone, range, compare; the
// release is the process's), with the version of the job's figures it was computed at. One
// cache for the single job, the batch (whose entries are the single job's answers) and the rollup. The ETag says
// the answer is the same while that version is, so a repeated question costs the version's
// read (the job's summary rows and unfolded deltas, not its screens) instead of the figures';
// a kept answer is never given without that read, which is scoped to the caller's organization.
// "Least recently asked": looked up, whether or not the answer was then given.

export interface CachedAnswer { version: string, body: string }

/** A job's analytics question: what the single job's answer (and a batch's entry) depends on besides the version. */
export const jobQuestion = (jobId: string, rulesId: string, zone: string, from = '', to = '', compare = ''): string =>
  `${jobId}|${rulesId}|${zone}|${from}|${to}|${compare}`

export class AnswerCache {
  private readonly answers: LRUCache<string, CachedAnswer> | undefined

  /** `maxBytes`: the answers' text at most (0: nothing kept); the least recently asked go first. */
  constructor (maxBytes: number) {
    this.answers = maxBytes === 0
      ? undefined
      : new LRUCache({ maxSize: maxBytes, sizeCalculation: (answer, question) => Math.max(1, 2 * (answer.body.length + answer.version.length + question.length)) })
  }

  /** The answer last given to `question`, whatever its version (the caller checks it). */
  get (question: string): CachedAnswer | undefined { return this.answers?.get(question) }

  set (question: string, answer: CachedAnswer): void { this.answers?.set(question, answer) }
}
