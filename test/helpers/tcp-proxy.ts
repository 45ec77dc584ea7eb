import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'

interface Pair { client: Socket, upstream: Socket, held: Array<[Socket, Buffer]> }

const DEFAULT_PORTS: Record<string, number> = { 'postgresql:': 5432, 'postgres:': 5432, 'redis:': 6379 }

/**
 * A TCP proxy in front of a real server (PostgreSQL, Redis) that a test steers, to make the
 * faults a network and a database make: `cut()` resets every open connection, `refuse()`
 * stops listening (new connections get ECONNREFUSED), `freeze()` lets nothing through in
 * either direction while every socket stays open (a hung server or a dropped route), and
 * `restore()` undoes all three, delivering what was held back in order.
 */
export class TcpProxy {
  private readonly pairs = new Set<Pair>()
  private frozen = false
  private constructor (private readonly server: Server, private readonly port: number, private readonly target: { host: string, port: number }, readonly url: string) {}

  /** A proxy in front of the server `url` names; its `url` is the same one through the proxy. */
  static async before (url: string): Promise<TcpProxy> {
    const target = new URL(url)
    const server = createServer()
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as AddressInfo).port
    const proxied = new URL(url)
    proxied.hostname = '127.0.0.1'
    proxied.port = String(port)
    const proxy = new TcpProxy(server, port, { host: target.hostname, port: Number(target.port === '' ? DEFAULT_PORTS[target.protocol] : target.port) }, proxied.toString())
    server.on('connection', socket => { proxy.accept(socket) })
    return proxy
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

  async restore (): Promise<void> {
    this.frozen = false
    for (const pair of this.pairs) {
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
    const pair: Pair = { client, upstream, held: [] }
    this.pairs.add(pair)
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', chunk => {
        if (this.frozen) pair.held.push([to, chunk])
        else to.write(chunk)
      })
      from.on('close', () => { this.drop(pair, false) })
      from.on('error', () => { this.drop(pair, false) })
    }
    forward(client, upstream)
    forward(upstream, client)
  }

  /** Closes both sides; `reset` sends the client a TCP RST, as a dead peer or router would. */
  private drop (pair: Pair, reset: boolean): void {
    if (!this.pairs.delete(pair)) return
    if (reset && !pair.client.destroyed) pair.client.resetAndDestroy()
    else pair.client.destroy()
    pair.upstream.destroy()
  }
}
