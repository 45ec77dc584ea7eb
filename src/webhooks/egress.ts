import dns from 'node:dns'
import { EventEmitter } from 'node:events'
import net from 'node:net'
import ipaddr from 'ipaddr.js'
import { Agent, request } from 'undici'
import { retryAfter, single, type AttemptResult } from './attempt-result.js'

// The only code that opens a connection to a partner (docs/webhooks-design.md, "Never to an
// internal address"). An endpoint's address must be public (ipaddr.js's `unicast`: not
// loopback, private, link-local or cloud metadata, carrier-grade NAT, multicast, unspecified,
// reserved, unique-local, IPv4-mapped, …) and its scheme https, unless the address is in
// WEBHOOK_ALLOWED_NETWORKS, which the operator allows over http too. Checked when an
// endpoint is created or changed (every address its name resolves to), and again when each
// connection is opened, on the addresses actually dialled (the lookup of undici's connector,
// before the TCP connect; a literal address before the request): a name that resolves
// elsewhere later (DNS rebinding) is refused then. No redirect is followed; the response body
// is read up to 64 KiB. undici rather than node:http: half the CPU per request
// (docs/webhooks-design.md, "Cost").

export type Lookup = typeof dns.lookup

const MAX_RESPONSE_BYTES = 64 * 1024
const RESOLVE_TIMEOUT_MS = 3000
/** A kept-alive connection to an endpoint unused this long is closed (sooner when the endpoint's Keep-Alive header asks). */
const IDLE_SOCKET_MS = 60_000
const USER_AGENT = 'screening-read-api-webhooks/1 (+https://www.standardwebhooks.com/)'
/** URLs whose parse and literal address's check are kept (an instance's endpoints'): past it, the cache starts over. */
const MAX_TARGETS = 10_000

/** An endpoint's URL as a request needs it: parsed, and why it is refused before any lookup (a scheme, a literal address), if it is. */
type Target = { url: URL, agent: Agent, refused?: undefined } | { url?: undefined, agent?: undefined, refused: string }

/**
 * What a partner is told of every refused address, whatever the cause (a literal, what a name
 * resolves to, a name that does not resolve, plain http): nothing that maps the service's
 * internal DNS. The detail goes to the service's log only.
 */
export const NOT_PUBLIC = 'not a public address: an endpoint must be https at a public address (or at one the operator allows)'

/** A connection refused by the guard, before any was opened: the partner sees NOT_PUBLIC, the log the address. */
class AddressRefused extends Error {
  readonly code = 'ERR_ADDRESS_REFUSED'
  constructor (readonly address: string) { super(`refused: ${NOT_PUBLIC}`) }
}

/** Where the guard says what it refused and why (the service's log). */
export interface RefusalLog { info: (fields: Record<string, unknown>, message: string) => void }

/** Why a URL may not be an endpoint's: `message` for the partner, `detail` for the log. */
export interface Refusal { message: string, detail: string }

export class EgressGuard {
  private readonly networks: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>
  private readonly agents: Record<'http:' | 'https:', Agent>
  private readonly targets = new Map<string, Target>()

  /** `allowedNetworks`: CIDRs allowed although not public, over http too. `lookup`: the resolver (tests pass a stub). */
  constructor (allowedNetworks: string[], private readonly lookup: Lookup = dns.lookup, private readonly log?: RefusalLog) {
    this.networks = allowedNetworks.map(cidr => ipaddr.parseCIDR(cidr))
    // One pool per scheme, each resolving through the guard for its scheme: over http only the
    // allowed networks, over https any public address too.
    const agent = (protocol: 'http:' | 'https:'): Agent => new Agent({ keepAliveTimeout: IDLE_SOCKET_MS, keepAliveMaxTimeout: IDLE_SOCKET_MS, connect: { lookup: this.guardedLookup(protocol) } })
    this.agents = { 'http:': agent('http:'), 'https:': agent('https:') }
  }

  /** The resolver a connection dials through: every address the name resolves to must be one `protocol` may reach. */
  private guardedLookup (protocol: 'http:' | 'https:'): Lookup {
    return ((hostname: string, options: dns.LookupOptions, callback: (error: NodeJS.ErrnoException | null, address?: string | dns.LookupAddress[], family?: number) => void) => {
      this.lookup(hostname, options, (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => {
        if (error !== null) { callback(error); return }
        const refused = (Array.isArray(address) ? address.map(a => a.address) : [address]).find(a => this.addressRefusal(a, protocol) !== undefined)
        if (refused === undefined) { callback(null, address, family); return }
        this.log?.info({ host: hostname, address: refused, reason: this.addressRefusal(refused, protocol) }, 'webhooks: a connection to a non-public address was refused')
        callback(new AddressRefused(refused))
      })
    }) as unknown as Lookup
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

  /**
   * Why `raw` may not be an endpoint's URL, or undefined when it may: checked at creation and
   * change. Every refusal of its address is NOT_PUBLIC to the partner (see above).
   */
  async refusal (raw: string): Promise<Refusal | undefined> {
    const said = (message: string): Refusal => ({ message, detail: message })
    let url: URL
    try { url = new URL(raw) } catch { return said('is not an absolute URL') }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return said('must be https')
    if (url.username !== '' || url.password !== '') return said('must not carry credentials: put them in the path or query, or verify the signature instead')
    if (url.hash !== '') return said('must not have a fragment')
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    const addresses = net.isIP(host) !== 0 ? [host] : await this.resolve(host)
    const notPublic = (detail: string): Refusal => ({ message: `is refused: ${NOT_PUBLIC}`, detail: `${host}: ${detail}` })
    if (!Array.isArray(addresses)) return notPublic(addresses.error)
    for (const address of addresses) {
      const refused = this.addressRefusal(address, url.protocol)
      if (refused !== undefined) return notPublic(net.isIP(host) !== 0 ? refused : `resolves to ${refused}`)
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
    const { url, agent, refused } = this.target(raw)
    if (refused !== undefined) return { error: refused, durationMs: elapsed() }
    // One timer for the whole attempt (connect, headers, body), aborting it. An EventEmitter,
    // which undici takes as a signal: an AbortSignal's listeners cost more CPU per request.
    const abort = Object.assign(new EventEmitter(), { aborted: false, reason: undefined as Error | undefined })
    const timer = setTimeout(() => {
      abort.aborted = true
      abort.reason = Object.assign(new Error('timeout'), { name: 'TimeoutError' })
      abort.emit('abort')
    }, timeoutMs)
    try {
      const response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        body,
        signal: abort,
      })
      const retryAfterMs = retryAfter(single(response.headers['retry-after']))
      const result = { status: response.statusCode, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }
      // The body is read (up to the cap) so that the connection is kept; what it says is not used.
      await response.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => {})
      return { ...result, durationMs: elapsed() }
    } catch (error) {
      return { error: describe(error as NodeJS.ErrnoException, timeoutMs), durationMs: elapsed() }
    } finally {
      clearTimeout(timer)
    }
  }

  /** `raw` parsed, with what refuses it before any lookup, once per URL: every event to an endpoint goes to its one URL. */
  private target (raw: string): Target {
    const known = this.targets.get(raw)
    if (known !== undefined) return known
    if (this.targets.size >= MAX_TARGETS) this.targets.clear()
    const target = this.parseTarget(raw)
    this.targets.set(raw, target)
    return target
  }

  private parseTarget (raw: string): Target {
    let url: URL
    try { url = new URL(raw) } catch { return { refused: 'not a URL' } }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return { refused: `scheme ${url.protocol} refused` }
    // A literal address is dialled without a lookup: checked here.
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    if (net.isIP(host) !== 0 && this.addressRefusal(host, url.protocol) !== undefined) return { refused: new AddressRefused(host).message }
    return { url, agent: this.agents[url.protocol] }
  }

  close (): void {
    for (const agent of Object.values(this.agents)) agent.destroy().catch(() => {})
  }
}

function describe (error: NodeJS.ErrnoException, timeoutMs: number): string {
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return `no answer within ${timeoutMs} ms`
  const cause = error.cause as NodeJS.ErrnoException | undefined
  if (error instanceof AddressRefused) return error.message
  if (cause instanceof AddressRefused) return cause.message
  const code = error.code ?? cause?.code
  const message = cause?.message ?? error.message
  return code !== undefined ? `${code}${message.includes(code) ? '' : `: ${message}`}` : message
}
