import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'

interface Pair { client: Socket, upstream: Socket, held: Array<[Socket, Buffer]>, fromServer: Buffer, stalled: boolean }

// PostgreSQL's NotificationResponse ('A'): the one message a transaction-mode pooler loses.
const NOTIFICATION = 0x41

const DEFAULT_PORTS: Record<string, number> = { 'postgresql:': 5432, 'postgres:': 5432, 'redis:': 6379 }

/**
 * A TCP proxy in front of a real server (PostgreSQL, Redis) that a test steers, to make the
 * faults a network and a database make: `cut()` resets every open connection, `refuse()`
 * stops listening (new connections get ECONNREFUSED), `freeze()` lets nothing through in
 * either direction while every socket stays open (a hung server or a dropped route), and
 * `restore()` undoes all three, delivering what was held back in order; `retarget()` sends
 * new connections to another server; `stallStatementsWith()` hangs the connections that send
 * a given statement. In front of
 * PostgreSQL without TLS, `muteNotifications()` drops the notifications the server sends
 * while passing everything else (a pooler that answers queries but loses what LISTEN hears).
 */
export class TcpProxy {
  private readonly pairs = new Set<Pair>()
  private frozen = false
  private muted = false
  private stallOn: Buffer | undefined
  private constructor (private readonly server: Server, private readonly port: number, private target: { host: string, port: number }, readonly url: string, private readonly postgres: boolean) {}

  /** A proxy in front of the server `url` names; its `url` is the same one through the proxy. */
  static async before (url: string): Promise<TcpProxy> {
    const target = new URL(url)
    const server = createServer()
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as AddressInfo).port
    const proxied = new URL(url)
    proxied.hostname = '127.0.0.1'
    proxied.port = String(port)
    const proxy = new TcpProxy(server, port, { host: target.hostname, port: Number(target.port === '' ? DEFAULT_PORTS[target.protocol] : target.port) }, proxied.toString(), target.protocol.startsWith('postgres'))
    server.on('connection', socket => { proxy.accept(socket) })
    return proxy
  }

  /**
   * From now on, new connections go to the server `url` names; open ones stay with the old
   * one (a DNS name moved to another server, as clients with pooled connections see it).
   */
  retarget (url: string): void {
    const target = new URL(url)
    this.target = { host: target.hostname, port: Number(target.port === '' ? DEFAULT_PORTS[target.protocol] : target.port) }
  }

  /** Connections open through the proxy now. */
  get connections (): number { return this.pairs.size }

  cut (): void {
    for (const pair of this.pairs) this.drop(pair, true)
  }

  refuse (): void {
    if (this.server.listening) this.server.close()
  }

  freeze (): void {
    this.frozen = true
  }

  muteNotifications (muted = true): void {
    this.muted = muted
  }

  /**
   * Holds back, from the first client chunk that contains `text` on, everything that
   * client sends on that connection (its statement hangs; other connections pass): a path
   * stalled for one kind of statement only. `restore()` delivers what was held.
   */
  stallStatementsWith (text: string): void {
    this.stallOn = Buffer.from(text)
  }

  async restore (): Promise<void> {
    this.frozen = false
    this.stallOn = undefined
    for (const pair of this.pairs) {
      pair.stalled = false
      for (const [to, chunk] of pair.held.splice(0)) to.write(chunk)
    }
    if (!this.server.listening) {
      await new Promise<void>((resolve, reject) => {
        this.server.once('error', reject) // EADDRINUSE: someone took the port meanwhile
        this.server.listen(this.port, '127.0.0.1', () => { this.server.off('error', reject); resolve() })
      })
    }
  }

  async close (): Promise<void> {
    this.cut()
    if (this.server.listening) await new Promise(resolve => this.server.close(resolve))
  }

  private accept (client: Socket): void {
    const upstream = connect(this.target.port, this.target.host)
    const pair: Pair = { client, upstream, held: [], fromServer: Buffer.alloc(0), stalled: false }
    this.pairs.add(pair)
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (data: Buffer) => {
        const chunk = from === upstream && this.postgres ? this.filterServerMessages(pair, data) : data
        if (chunk.length === 0) return
        if (from === client && this.stallOn !== undefined && chunk.includes(this.stallOn)) pair.stalled = true
        if (this.frozen || (from === client && pair.stalled)) pair.held.push([to, chunk])
        else to.write(chunk)
      })
      from.on('close', () => { this.drop(pair, false) })
      from.on('error', () => { this.drop(pair, false) })
    }
    forward(client, upstream)
    forward(upstream, client)
  }

  /**
   * The server's side cut into whole messages (a type byte and a length that counts itself),
   * notifications dropped while muted; a partial message waits for the rest.
   */
  private filterServerMessages (pair: Pair, data: Buffer): Buffer {
    let pending = Buffer.concat([pair.fromServer, data])
    const kept: Buffer[] = []
    while (pending.length >= 5) {
      const end = 1 + pending.readInt32BE(1)
      if (pending.length < end) break
      if (!(this.muted && pending[0] === NOTIFICATION)) kept.push(pending.subarray(0, end))
      pending = pending.subarray(end)
    }
    pair.fromServer = Buffer.from(pending)
    return Buffer.concat(kept)
  }

  /** Closes both sides; `reset` sends the client a TCP RST, as a dead peer or router would. */
  private drop (pair: Pair, reset: boolean): void {
    if (!this.pairs.delete(pair)) return
    if (reset && !pair.client.destroyed) pair.client.resetAndDestroy()
    else pair.client.destroy()
    pair.upstream.destroy()
  }
}
