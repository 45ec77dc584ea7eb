// The few protobuf encodings OTLP's trace messages need, into one growing buffer: a span is
// written where the batch's bytes are (no object per field), a message's length patched in
// when it closes. Byte by byte where Buffer's methods cost more than the bytes (short ASCII
// strings, hex ids): this runs for every span.

// A hex digit's value by its char code; ids are lowercase hex (W3C trace context).
const NIBBLE = new Uint8Array(128)
for (let i = 0; i < 16; i++) NIBBLE['0123456789abcdef'.charCodeAt(i)] = i
for (let i = 10; i < 16; i++) NIBBLE['ABCDEF'.charCodeAt(i - 10)] = i

export class ProtobufWriter {
  buffer = Buffer.allocUnsafe(64 * 1024)
  length = 0
  readonly #open: number[] = []

  #room (bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes))
    this.buffer.copy(grown, 0, 0, this.length)
    this.buffer = grown
  }

  /** A non-negative integer below 2^53. */
  varint (value: number): void {
    this.#room(10)
    const b = this.buffer
    while (value > 0x7f) {
      b[this.length++] = (value % 0x80) | 0x80
      value = Math.floor(value / 0x80)
    }
    b[this.length++] = value
  }

  tag (field: number, wireType: 0 | 1 | 2 | 5): void { this.varint(field * 8 + wireType) }

  string (field: number, value: string): void {
    this.tag(field, 2)
    const n = value.length
    if (n < 0x80) {
      this.#room(n + 1)
      const b = this.buffer
      const start = this.length
      let i = 0
      for (; i < n; i++) {
        const c = value.charCodeAt(i)
        if (c >= 0x80) break
        b[start + 1 + i] = c
      }
      if (i === n) {
        b[start] = n
        this.length = start + 1 + n
        return
      }
    }
    const bytes = Buffer.byteLength(value)
    this.varint(bytes)
    this.#room(bytes)
    this.length += this.buffer.write(value, this.length, 'utf8')
  }

  /** Bytes given as hex (a trace or span id). */
  hex (field: number, value: string): void {
    const n = value.length >>> 1
    this.tag(field, 2)
    this.varint(n)
    this.#room(n)
    const b = this.buffer
    for (let i = 0; i < n; i++) b[this.length++] = (NIBBLE[value.charCodeAt(2 * i) & 0x7f]! << 4) | NIBBLE[value.charCodeAt(2 * i + 1) & 0x7f]!
  }

  /** Epoch milliseconds as fixed64 nanoseconds, to the microsecond (a double's ms hold no finer), without a BigInt. */
  nanos (field: number, ms: number): void {
    this.tag(field, 1)
    this.#room(8)
    const micros = Math.round(ms * 1000)
    const low = (micros % 0x100000000) * 1000
    const lowWord = low % 0x100000000
    const highWord = Math.floor(micros / 0x100000000) * 1000 + Math.floor(low / 0x100000000)
    this.buffer.writeUInt32LE(lowWord, this.length)
    this.buffer.writeUInt32LE(highWord, this.length + 4)
    this.length += 8
  }

  double (field: number, value: number): void {
    this.tag(field, 1)
    this.#room(8)
    this.length = this.buffer.writeDoubleLE(value, this.length)
  }

  /** An int64 (a negative one in ten bytes, as protobuf writes it). */
  int64 (field: number, value: number): void {
    this.tag(field, 0)
    if (value >= 0) { this.varint(value); return }
    let rest = BigInt.asUintN(64, BigInt(value))
    this.#room(10)
    while (rest > 0x7fn) {
      this.buffer[this.length++] = Number(rest & 0x7fn) | 0x80
      rest >>= 7n
    }
    this.buffer[this.length++] = Number(rest)
  }

  /** Bytes already encoded (fields of the open message). */
  raw (value: Uint8Array): void {
    this.#room(value.length)
    this.buffer.set(value, this.length)
    this.length += value.length
  }

  bytes (field: number, value: Uint8Array): void {
    this.tag(field, 2)
    this.varint(value.length)
    this.raw(value)
  }

  /** Opens an embedded message (field `field`), closed by `close`: one byte kept for its length. */
  open (field: number): void {
    this.tag(field, 2)
    this.#room(1)
    this.#open.push(this.length)
    this.length += 1
  }

  close (): void {
    const at = this.#open.pop()!
    const size = this.length - at - 1
    if (size < 0x80) {
      this.buffer[at] = size
      return
    }
    // A longer one: its length's varint needs more bytes; the body moves up to make room.
    let extra = 0
    for (let rest = size >>> 7; rest > 0; rest >>>= 7) extra++
    this.#room(extra)
    this.buffer.copyWithin(at + 1 + extra, at + 1, this.length)
    let rest = size
    let i = at
    while (rest > 0x7f) {
      this.buffer[i++] = (rest & 0x7f) | 0x80
      rest >>>= 7
    }
    this.buffer[i] = rest
    this.length += extra
  }

  /** What is written, copied out; the writer emptied. */
  take (): Uint8Array {
    const out = Uint8Array.prototype.slice.call(this.buffer, 0, this.length)
    this.length = 0
    return out
  }
}
