import type { WebhookEvent } from './generated/index.js'

/** Why a delivery was refused: answer it 400 (or 401), and do not act on it. */
export type WebhookVerificationReason = 'missing_header' | 'invalid_timestamp' | 'timestamp_out_of_tolerance' | 'no_matching_signature' | 'invalid_body'

/** A delivery that is not the service's, or too old to be trusted (a replay): `reason` says which. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'
  constructor (readonly reason: WebhookVerificationReason, message: string) { super(message) }
}

/** The request's headers: a `Headers`, or an object of any case of names (Node's `request.headers`). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

export interface VerifyWebhookOptions {
  /** Largest distance, either way, between `webhook-timestamp` and now. Default 300 s (Standard Webhooks'). */
  toleranceSeconds?: number
}

const header = (headers: WebhookHeaders, name: string): string => {
  // A plain object's values are never functions: `get` tells a Headers of any realm.
  if (typeof headers.get === 'function') return (headers as Headers).get(name) ?? ''
  const value = Object.entries(headers as Record<string, string | string[] | undefined>).find(([key]) => key.toLowerCase() === name)?.[1]
  return (Array.isArray(value) ? value.join(' ') : value) ?? ''
}

const bytes = (base64: string): Uint8Array<ArrayBuffer> | undefined => {
  try { return Uint8Array.from(atob(base64), c => c.charCodeAt(0)) } catch { return undefined }
}

// Compares every byte whatever the first difference, so the time taken does not tell an
// attacker how much of a forged signature was right.
const equal = (a: Uint8Array, b: Uint8Array): boolean => {
  let diff = a.length ^ b.length
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ (b[i] ?? 0)
  return diff === 0
}

/**
 * Verifies a webhook delivery per Standard Webhooks 1.0.0 and returns its event. `secrets`:
 * the endpoint's `whsec_…` secret, or several while a rotation's grace lasts (any one signing
 * is enough); `body`: the request's body exactly as received, before any JSON parsing.
 * Throws a `WebhookVerificationError` for a delivery to refuse. Needs WebCrypto (`crypto.subtle`).
 */
export async function verifyWebhook (secrets: string | readonly string[], headers: WebhookHeaders, body: string | Uint8Array, options: VerifyWebhookOptions = {}): Promise<WebhookEvent> {
  // A bad secret is the receiver's mistake, not the sender's: a TypeError, whatever the delivery.
  const keys = (typeof secrets === 'string' ? [secrets] : secrets).map(secret => bytes(secret.startsWith('whsec_') ? secret.slice(6) : secret))
  if (keys.length === 0 || keys.some(key => key === undefined || key.length === 0)) throw new TypeError('verifyWebhook needs secrets, each whsec_ followed by base64')
  const [id, timestamp, signatures] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map(name => {
    const value = header(headers, name).trim()
    if (value === '') throw new WebhookVerificationError('missing_header', `no ${name} header`)
    return value
  }) as [string, string, string]
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('invalid_timestamp', `webhook-timestamp is not seconds since the epoch: ${timestamp}`)
  const skew = Math.floor(Date.now() / 1000) - Number(timestamp)
  if (Math.abs(skew) > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError('timestamp_out_of_tolerance', `webhook-timestamp is ${Math.abs(skew)} s ${skew > 0 ? 'old' : 'ahead'}`)

  const raw = typeof body === 'string' ? new TextEncoder().encode(body) : body
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`)
  const signed = new Uint8Array(prefix.length + raw.length)
  signed.set(prefix)
  signed.set(raw, prefix.length)
  const candidates = signatures.split(' ').filter(s => s.startsWith('v1,')).map(s => bytes(s.slice(3))).filter(s => s !== undefined)
  let matched = false
  for (const key of keys) {
    const hmac = await crypto.subtle.importKey('raw', key!, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    const expected = new Uint8Array(await crypto.subtle.sign('HMAC', hmac, signed))
    for (const candidate of candidates) matched = equal(candidate, expected) || matched
  }
  if (!matched) throw new WebhookVerificationError('no_matching_signature', 'no signature of webhook-signature verifies with the secret')
  try {
    return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as WebhookEvent
  } catch {
    throw new WebhookVerificationError('invalid_body', 'the body is not JSON')
  }
}
