import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import { dataDirKey } from '../db/data-dir-key.js'

// Endpoints' signing secrets are stored encrypted (AES-256-GCM), so that a dump of the database
// alone does not let anyone sign as the service. The key is the operator's
// (WEBHOOK_SECRET_KEY, the same on every instance); the embedded database makes one and keeps
// it beside its data. Each secret is bound to its endpoint's id (the cipher's associated
// data): a ciphertext copied to another endpoint's row does not open there.

const NONCE = 12
const TAG = 16

export class SecretBox {
  constructor (private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the webhook secret key must be 32 bytes')
  }

  /** `secret` encrypted for the endpoint `endpointId`: nonce, tag, ciphertext. */
  seal (endpointId: string, secret: string): Uint8Array<ArrayBuffer> {
    const nonce = randomBytes(NONCE)
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce).setAAD(Buffer.from(endpointId))
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
    return new Uint8Array(Buffer.concat([nonce, cipher.getAuthTag(), sealed]))
  }

  /** The secret `seal` sealed for `endpointId`; throws on another key, endpoint or a changed box. */
  open (endpointId: string, box: Uint8Array): string {
    const bytes = Buffer.from(box)
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, NONCE)).setAAD(Buffer.from(endpointId))
    decipher.setAuthTag(bytes.subarray(NONCE, NONCE + TAG))
    return Buffer.concat([decipher.update(bytes.subarray(NONCE + TAG)), decipher.final()]).toString('utf8')
  }
}

/** The embedded database's key: DATA_DIR/webhook-secret.key, made on first use, readable by its owner only. */
export async function embeddedSecretKey (dataDir: string): Promise<Buffer> {
  await mkdir(resolve(dataDir), { recursive: true })
  return Buffer.from(await dataDirKey(resolve(dataDir), 'webhook-secret.key'), 'base64')
}
