import dns from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import ipaddr from 'ipaddr.js'
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent'

// The only code that opens a connection to a partner (docs/webhooks-design.md, "Never to an
// internal address"). An endpoint's address must be public (ipaddr.js's `unicast`: not
// loopback, private, link-local or cloud metadata, carrier-grade NAT, multicast, unspecified,
// reserved, unique-local, IPv4-mapped, …) and its scheme https, unless the address is in
// WEBHOOK_ALLOWED_NETWORKS, which the operator allows over http too. Checked when an
// endpoint is created or changed (every address its name resolves to), and again when each
// connection is opened, on the address actually dialled (request-filtering-agent's lookup
// hook, before the TCP connect): a name that resolves elsewhere later (DNS rebinding) is
// refused then. No redirect is followed; the response body is read up to 64 KiB.

export type Lookup = typeof dns.lookup

/** How an attempt went: the status the endpoint answered, or why there was none. */
export interface AttemptResult { status?: number, retryAfterMs?: number, error?: string, durationMs: number }

const MAX_RESPONSE_BYTES = 64 * 1024
const RESOLVE_TIMEOUT_MS = 3000
/** A kept-alive connection to an endpoint unused this long is closed (node:http's agent closes a free socket on its timeout). */
const IDLE_SOCKET_MS = 60_000
const USER_AGENT = 'screening-read-api-webhooks/1 (+https://www.standardwebhooks.com/)'

export class EgressGuard {
  private readonly networks: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>
  private readonly httpAgent: http.Agent
  private readonly httpsAgent: https.Agent

  /** `allowedNetworks`: CIDRs allowed although not public, over http too. `lookup`: the resolver (tests pass a stub). */
  constructor (allowedNetworks: string[], private readonly lookup: Lookup = dns.lookup) {
    this.networks = allowedNetworks.map(cidr => ipaddr.parseCIDR(cidr))
    // Over http only the allowed networks (every other address is denied); over https any
    // public address too. The allowed list is read first in both.
    this.httpAgent = new RequestFilteringHttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, allowIPAddressList: allowedNetworks, denyIPAddressList: ['0.0.0.0/0', '::/0'] })
    this.httpsAgent = new RequestFilteringHttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, allowIPAddressList: allowedNetworks })
  }

  private allowedNetwork (address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    return this.networks.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits))
  }

  /** Why `address` may not be dialled over `protocol`, or undefined when it may. */
  addressRefusal (address: string, protocol: 'http:' | 'https:'): string | undefined {
    let parsed: ipaddr.IPv4 | ipaddr.IPv6
    try { parsed = ipaddr.parse(address) } catch { return `${address} is not an IP address` }
    if (this.allowedNetwork(parsed)) return undefined
    const range = parsed.range()
    if (range !== 'unicast') return `${address} is not a public address (${range})`
    // ::a.b.c.d, IPv4-compatible (deprecated): public to ipaddr.js, never an endpoint's address.
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every(part => part === 0)) return `${address} is not a public address (IPv4-compatible IPv6)`
    if (protocol === 'http:') return 'plain http is allowed only to WEBHOOK_ALLOWED_NETWORKS: use https'
    return undefined
  }

  private async resolve (host: string): Promise<string[] | { error: string }> {
    return await new Promise(resolve => {
      const timer = setTimeout(() => { resolve({ error: 'its name did not resolve in time' }) }, RESOLVE_TIMEOUT_MS)
      this.lookup(host, { all: true }, (error, addresses) => {
        clearTimeout(timer)
        if (error !== null) resolve({ error: `its name does not resolve (${error.code ?? error.message})` })
        else resolve((addresses as dns.LookupAddress[]).map(a => a.address))
      })
    })
  }

  /** Why `raw` may not be an endpoint's URL, or undefined when it may: checked at creation and change. */
  async refusal (raw: string): Promise<string | undefined> {
    let url: URL
    try { url = new URL(raw) } catch { return 'is not an absolute URL' }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be https (or http to an address of WEBHOOK_ALLOWED_NETWORKS)'
    if (url.username !== '' || url.password !== '') return 'must not carry credentials: put them in the path or query, or verify the signature instead'
    if (url.hash !== '') return 'must not have a fragment'
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    const addresses = net.isIP(host) !== 0 ? [host] : await this.resolve(host)
    if (!Array.isArray(addresses)) return addresses.error
    for (const address of addresses) {
      const refused = this.addressRefusal(address, url.protocol)
      if (refused !== undefined) return net.isIP(host) !== 0 ? `is refused: ${refused}` : `is refused: ${host} resolves to ${refused}`
    }
    return undefined
  }

  /**
   * POSTs `body` to `raw`, through the guard: the address dialled is checked again. Resolves
   * with the status, or the reason there is none (never rejects). Redirects are not followed.
   */
  async post (raw: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<AttemptResult> {
    const started = performance.now()
    const elapsed = (): number => Math.round(performance.now() - started)
    let url: URL
    try { url = new URL(raw) } catch { return { error: 'not a URL', durationMs: 0 } }
    const agent = url.protocol === 'https:' ? this.httpsAgent : url.protocol === 'http:' ? this.httpAgent : undefined
    if (agent === undefined) return { error: `scheme ${url.protocol} refused`, durationMs: 0 }
    return await new Promise<AttemptResult>(resolve => {
      let settled = false
      const done = (result: Omit<AttemptResult, 'durationMs'>): void => {
        if (settled) return
        settled = true
        resolve({ ...result, durationMs: elapsed() })
      }
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        agent,
        lookup: this.lookup,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': USER_AGENT },
      }, response => {
        const status = response.statusCode ?? 0
        const retryAfterMs = retryAfter(response.headers['retry-after'])
        const result = { status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }
        let read = 0
        response.on('data', (chunk: Buffer) => {
          read += chunk.length
          if (read > MAX_RESPONSE_BYTES) { response.destroy(); done(result) }
        })
        response.on('end', () => { done(result) })
        response.on('error', () => { done(result) })
      })
      // A timer of our own rather than AbortSignal.timeout: one per delivery, cheap.
      const timer = setTimeout(() => { request.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })) }, timeoutMs)
      request.on('close', () => { clearTimeout(timer) })
      request.on('error', (error: NodeJS.ErrnoException) => { done({ error: describe(error, timeoutMs) }) })
      request.end(body)
    })
  }

  close (): void {
    this.httpAgent.destroy()
    this.httpsAgent.destroy()
  }
}

/** The longest Retry-After honoured: a day (an endpoint cannot push its events past the retry schedule's reach, nor past a date's range). */
export const MAX_RETRY_AFTER_MS = 86_400_000

/** Retry-After in milliseconds (seconds, or an HTTP date), at most a day; undefined if none or unreadable. */
export function retryAfter (value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  // Delay-seconds, or an HTTP date (it names a weekday and a month); anything else is ignored.
  const ms = /^\d{1,15}$/.test(trimmed) ? Number(trimmed) * 1000 : /^\d+$/.test(trimmed) ? MAX_RETRY_AFTER_MS : /[A-Za-z]/.test(trimmed) ? Date.parse(trimmed) - Date.now() : NaN
  return Number.isFinite(ms) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)) : undefined
}

function describe (error: NodeJS.ErrnoException, timeoutMs: number): string {
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return `no answer within ${timeoutMs} ms`
  // request-filtering-agent: "DNS lookup 10.0.0.1(family:4, host:…) is not allowed. Because, It is private IP address."
  const refused = /DNS lookup (\S+?)\(.*is not allowed/.exec(error.message)
  if (refused !== null) return `refused: ${refused[1]} is not an address endpoints may be at`
  return error.code !== undefined ? `${error.code}${error.message.includes(error.code) ? '' : `: ${error.message}`}` : error.message
}
