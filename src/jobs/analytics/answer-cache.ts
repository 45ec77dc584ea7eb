import { LRUCache } from 'lru-cache'

// The last analytics answer given for each question (job, zone, range, rules, release), with
// the version of the job's figures it was computed at. The ETag says the answer is the same
// while that version is, so a repeated question costs the version's read (at most 8 summary
// rows, whatever the job's size) instead of the figures'; a question asked before is never
// answered without it, and so never for another organization (the read is scoped to the caller's).

export interface CachedAnswer { version: string, body: string }

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
