import type { Socket } from 'node:net'

// The PostgreSQL wire protocol, as much of it as the door (door.ts) reads and writes: a
// client's stream cut into messages, and what the embedded database answered, with its
// notifications and its last ReadyForQuery status picked out.

/** Request codes of the messages without a type byte that are not a startup message. */
export const SSL_REQUEST = 80877103
export const GSSENC_REQUEST = 80877104
export const CANCEL_REQUEST = 80877102

/** PostgreSQL's own bounds: a startup packet (MAX_STARTUP_PACKET_LENGTH), any other message (1 GB). */
const STARTUP_MAX = 10_000
const MESSAGE_MAX = 0x3fffffff

/** A client's message: `type` is undefined for those without a type byte (startup, SSL, GSS, cancel). */
export interface FrontendMessage { type: string | undefined, code: number | undefined, bytes: Buffer }

export class ProtocolViolation extends Error {}

/** Cuts a client's byte stream into whole messages, in order. */
export class FrontendMessages {
  private buffer: Buffer = Buffer.alloc(0)
  private started = false

  push (chunk: Buffer): FrontendMessage[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    const messages: FrontendMessage[] = []
    for (;;) {
      const header = this.started ? 5 : 8
      if (this.buffer.length < header) break
      const length = this.started ? 1 + this.buffer.readInt32BE(1) : this.buffer.readInt32BE(0)
      if (length < header || length > (this.started ? MESSAGE_MAX : STARTUP_MAX)) throw new ProtocolViolation(`invalid message length ${length}`)
      if (this.buffer.length < length) break
      const bytes = this.buffer.subarray(0, length)
      this.buffer = this.buffer.subarray(length)
      if (this.started) {
        messages.push({ type: String.fromCharCode(bytes[0]!), code: undefined, bytes })
      } else {
        const code = bytes.readInt32BE(4)
        // An SSL or GSS request is followed by the startup message; a cancel request ends the connection.
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST && code !== CANCEL_REQUEST) this.started = true
        messages.push({ type: undefined, code, bytes })
      }
    }
    return messages
  }
}

export interface Notification { channel: string, payload: string }

/** The database's answer to one message: what goes to the client, the notifications taken out, the last ReadyForQuery's status. */
export interface Answer { forward: Buffer, notifications: Notification[], ready: 'I' | 'T' | 'E' | undefined }

export function readAnswer (out: Buffer): Answer {
  const kept: Buffer[] = []
  const notifications: Notification[] = []
  let ready: Answer['ready']
  let offset = 0
  let from = 0
  while (offset + 5 <= out.length) {
    const type = String.fromCharCode(out[offset]!)
    const end = offset + 1 + out.readInt32BE(offset + 1)
    if (type === 'A') {
      // NotificationResponse: process id, then the channel and the payload as C strings.
      const body = out.subarray(offset + 9, end)
      const zero = body.indexOf(0)
      notifications.push({ channel: body.subarray(0, zero).toString(), payload: body.subarray(zero + 1, body.indexOf(0, zero + 1)).toString() })
      kept.push(out.subarray(from, offset))
      from = end
    } else if (type === 'Z') {
      ready = String.fromCharCode(out[offset + 5]!) as Answer['ready']
    }
    offset = end
  }
  kept.push(out.subarray(from))
  return { forward: kept.length === 1 ? kept[0]! : Buffer.concat(kept), notifications, ready }
}

function message (type: string, body: Buffer): Buffer {
  const bytes = Buffer.alloc(5 + body.length)
  bytes.write(type, 0, 'latin1')
  bytes.writeInt32BE(4 + body.length, 1)
  body.copy(bytes, 5)
  return bytes
}

/**
 * The client's startup message as PGlite is given it: its protocol version, PGlite's one user
 * and database. Other names are the client's defaults (an empty user, the login name), and a
 * startup PGlite refuses ends its only session, the owner's too.
 */
export function startupAs (client: Buffer): Buffer {
  const body = Buffer.from('user\0postgres\0database\0postgres\0\0')
  const bytes = Buffer.alloc(8 + body.length)
  bytes.writeInt32BE(bytes.length, 0)
  bytes.writeInt32BE(client.readInt32BE(4), 4)
  body.copy(bytes, 8)
  return bytes
}

/** A simple Query message. */
export const query = (sql: string): Buffer => message('Q', Buffer.from(`${sql}\0`))

/** A Sync message. */
export const SYNC = message('S', Buffer.alloc(0))

/** Ends a connection once `last` (if any) is written, without waiting for the client to end its side. */
export function hangUpOn (socket: Socket, last?: Buffer): void {
  if (last !== undefined) socket.write(last)
  socket.end(() => { socket.destroy() })
}

/** An ErrorResponse of severity FATAL: the client is disconnected after it. */
export const fatal = (code: string, text: string): Buffer =>
  message('E', Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${text}\0\0`))
