import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto'

// Standard Webhooks 1.0.0 (https://www.standardwebhooks.com/): each delivery carries
// `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature`, a space-separated list
// of `v1,<base64 of HMAC-SHA256 of "id.timestamp.body">`, one per secret that signs (two during
// a rotation's grace). A secret is `whsec_` and the base64 of its key.

const PREFIX = 'whsec_'

/** A new signing secret: 32 random bytes. */
export const newSigningSecret = (): string => PREFIX + randomBytes(32).toString('base64')

/** The keys of `secrets`, made once for the many signatures of a delivery job. */
export const signingKeys = (secrets: string[]): KeyObject[] => secrets.map(secret => createSecretKey(Buffer.from(secret.slice(PREFIX.length), 'base64')))

/** The `webhook-signature` header of `body`, signed with each of `keys` (signingKeys). */
export function signatureHeader (keys: KeyObject[], id: string, timestamp: number, body: string): string {
  return keys.map(key => `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`).join(' ')
}
