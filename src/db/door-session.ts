import type { Socket } from 'node:net'
import type { PGlite } from '@electric-sql/pglite'
import { CANCEL_REQUEST, fatal, FrontendMessages, GSSENC_REQUEST, hangUpOn, query, readAnswer, SSL_REQUEST, startupAs, SYNC, type Answer, type Notification } from './wire-messages.js'

// One client of the door (door.ts): its messages go to the embedded database one exchange at
// a time, each under PGlite's transaction lock, the one its own query(), exec() and
// transaction() take: in-process work never runs inside a client's exchange, nor the reverse.

/**
 * Longest a client may keep the database to itself while silent (inside a transaction, or
 * between an exchange's first message and its Sync): then it is rolled back and disconnected.
 */
export const DOOR_IDLE_MS = 5000

export interface DoorBackend {
  /** The database once it is open and migrated; rejects if the door closes first. */
  database: Promise<PGlite>
  /** Notifications the database sent in a client's answer: they are the process's listeners'. */
  notify: (notification: Notification) => void
}

const ROLLBACK = query('ROLLBACK')
const RESET_ALL = query('RESET ALL')
// Never DISCARD ALL or UNLISTEN *: the session is the process's too, and its LISTENs are the caller cache's.
const FORGET_CLIENT = query('DEALLOCATE ALL; CLOSE ALL; DISCARD TEMP; RESET ALL')

export class DoorSession {
  private readonly frames = new FrontendMessages()
  private readonly queue: Buffer[] = []
  private wake: (() => void) | undefined
  private running: Promise<void> | undefined
  private hungUp = false
  /** Whether a message of this client reached the database (then its state is cleaned at the end). */
  private touched = false
  private cleaned = false
  /** Messages sent since the database's last ReadyForQuery: an exchange before its Sync. */
  private pending = false
  private status: 'I' | 'T' | 'E' = 'I'
  private finish!: () => void
  /** Settles once the client is gone and its state cleaned from the database. */
  readonly done = new Promise<void>(resolve => { this.finish = resolve })

  constructor (private readonly socket: Socket, private readonly backend: DoorBackend) {
    socket.on('data', (chunk: Buffer) => { this.receive(chunk) })
    socket.on('close', () => { this.hangUp() })
    socket.on('error', () => { this.hangUp() })
  }

  /** Disconnects the client (the database is closing); `done` settles once its state is cleaned. */
  end (): void {
    this.socket.destroy()
    this.hangUp()
  }

  private receive (chunk: Buffer): void {
    if (this.hungUp) return
    let messages
    try {
      messages = this.frames.push(chunk)
    } catch (error) {
      this.refuse('08P01', `protocol violation: ${(error as Error).message}`)
      return
    }
    for (const { type, code, bytes } of messages) {
      if (type === undefined && (code === SSL_REQUEST || code === GSSENC_REQUEST)) {
        this.socket.write('N') // neither on a local socket; the startup message follows
      } else if ((type === undefined && code === CANCEL_REQUEST) || type === 'X') {
        // Cancelling is not offered (the database runs one exchange at a time); Terminate ends the client.
        hangUpOn(this.socket)
        this.hangUp()
        return
      } else {
        this.queue.push(type === undefined ? startupAs(bytes) : bytes)
      }
    }
    if (this.queue.length > 0) this.kick()
  }

  private refuse (code: string, text: string): void {
    hangUpOn(this.socket, fatal(code, text))
    this.hangUp()
  }

  private hangUp (): void {
    if (this.hungUp) return
    this.hungUp = true
    this.kick()
  }

  private kick (): void {
    if (this.wake !== undefined) { this.wake(); return }
    this.running ??= this.serve().finally(() => {
      this.running = undefined
      if (!this.cleaned && (this.hungUp || this.queue.length > 0)) this.kick()
    })
  }

  private async serve (): Promise<void> {
    let pglite: PGlite
    try {
      pglite = await this.backend.database
    } catch {
      this.socket.destroy()
      return this.markCleaned()
    }
    while (!this.cleaned && (this.hungUp || this.queue.length > 0)) {
      if (this.hungUp && !this.touched) return this.markCleaned()
      await pglite._runExclusiveTransaction(async () => {
        try {
          if (!this.hungUp) await this.exchange(pglite)
          if (this.hungUp) await this.cleanUp(pglite)
        } catch (error) {
          // The database failed under this client: it is told, and its state is not trusted further.
          this.refuse('XX000', `the embedded database failed: ${(error as Error).message}`)
          this.markCleaned()
        }
      })
    }
  }

  /** Sends the client's messages until an exchange ends idle with nothing more queued, or the client is gone. */
  private async exchange (pglite: PGlite): Promise<void> {
    for (;;) {
      const message = this.queue.shift() ?? await this.next()
      if (message === undefined) return
      this.touched = true
      const answer = await this.execute(pglite, message)
      if (answer.ready === undefined) this.pending = true
      else { this.pending = false; this.status = answer.ready }
      if (!this.hungUp && answer.forward.length > 0) this.socket.write(answer.forward)
      if (!this.pending && this.status === 'I' && this.queue.length === 0) {
        // A client's SET lasts until its exchange ends: the process's own statements never see it.
        await this.execute(pglite, RESET_ALL)
        return
      }
    }
  }

  /** The client's next message, or undefined once it is gone or has been silent DOOR_IDLE_MS (then it is disconnected). */
  private async next (): Promise<Buffer | undefined> {
    if (this.hungUp) return undefined
    await new Promise<void>(resolve => {
      const timer = setTimeout(() => {
        this.refuse('25P03', `silent for more than ${DOOR_IDLE_MS / 1000} s inside a transaction or an unfinished exchange on the embedded database's socket, which serves one exchange at a time: rolled back and disconnected`)
        resolve()
      }, DOOR_IDLE_MS)
      this.wake = () => { clearTimeout(timer); resolve() }
    })
    this.wake = undefined
    return this.hungUp ? undefined : this.queue.shift()
  }

  /** Leaves the session as the process had it: the client's transaction rolled back, its statements, cursors, temporary tables and settings gone. */
  private async cleanUp (pglite: PGlite): Promise<void> {
    if (this.pending) {
      // Rolled back, not synced: a Sync would commit what the client began.
      let answer = await this.execute(pglite, ROLLBACK)
      // After an error the database skips every message until a Sync, which then ends the failed exchange.
      if (answer.ready === undefined) answer = await this.execute(pglite, SYNC)
      this.status = answer.ready ?? 'E'
    }
    if (this.status !== 'I') await this.execute(pglite, ROLLBACK)
    await this.execute(pglite, FORGET_CLIENT)
    this.markCleaned()
  }

  private markCleaned (): void {
    this.cleaned = true
    this.finish()
  }

  private async execute (pglite: PGlite, message: Buffer): Promise<Answer> {
    const chunks: Buffer[] = []
    // Streamed: PGlite parses nothing of it (its in-process query state stays its own).
    await pglite.runExclusive(async () => {
      await pglite.execProtocolRawStream(message, { onRawData: data => { chunks.push(Buffer.from(data)) } })
    })
    const answer = readAnswer(Buffer.concat(chunks))
    for (const notification of answer.notifications) this.backend.notify(notification)
    return answer
  }
}
