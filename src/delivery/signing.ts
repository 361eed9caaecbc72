import { createCipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'

/**
 * Key derivation for encrypted payloads: HKDF-SHA256 over the signing secret's key bytes, no
 * salt, this info string, 32 bytes. Fixed forever: receivers derive the same key (README).
 */
export const ENCRYPTION_INFO = 'devplatform webhook payload encryption v1'

/** The key bytes of a Standard Webhooks secret (`whsec_` + base64). */
export function secretKey(signingSecret: string): Buffer {
  return Buffer.from(signingSecret.startsWith('whsec_') ? signingSecret.slice('whsec_'.length) : signingSecret, 'base64')
}

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export function sign(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`
}

export function encryptionKey(key: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), ENCRYPTION_INFO, 32))
}

const PROTECTED_HEADER = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256GCM' })).toString('base64url')

/** RFC 7516 compact serialization, alg dir, enc A256GCM: header..iv.ciphertext.tag (no encrypted key). */
export function encrypt(contentKey: Buffer, plaintext: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', contentKey, iv)
  // The protected header, base64url-encoded, is the additional authenticated data (RFC 7516 5.1).
  cipher.setAAD(Buffer.from(PROTECTED_HEADER, 'ascii'))
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return `${PROTECTED_HEADER}..${iv.toString('base64url')}.${ciphertext.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`
}

export interface SignedRequest {
  body: string
  headers: Record<string, string>
}

/**
 * The body and headers of one attempt: encrypted first when asked (with the current secret's key),
 * then signed over what is sent. After a rotation the replaced secret signs too, for its grace
 * period: `webhook-signature` then holds `v1,<current> v1,<previous>` (Standard Webhooks lists
 * space-separated signatures; a receiver accepts the request if any one verifies).
 */
export function signedRequest(input: {
  eventId: string
  payload: string
  signingSecret: string
  previousSigningSecret?: string | undefined
  encrypted: boolean
  nowMs: number
}): SignedRequest {
  const key = secretKey(input.signingSecret)
  const body = input.encrypted ? encrypt(encryptionKey(key), input.payload) : input.payload
  const timestamp = Math.floor(input.nowMs / 1000)
  const signatures = [sign(key, input.eventId, timestamp, body)]
  if (input.previousSigningSecret !== undefined) signatures.push(sign(secretKey(input.previousSigningSecret), input.eventId, timestamp, body))
  return {
    body,
    headers: {
      'content-type': input.encrypted ? 'application/jose' : 'application/json',
      'webhook-id': input.eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatures.join(' '),
    },
  }
}

/** The replaced secret still signs while its grace period runs. */
export function previousSecretInForce(previous: string | null, expiresAt: string | null, nowMs: number): string | undefined {
  return previous !== null && expiresAt !== null && Date.parse(expiresAt) > nowMs ? previous : undefined
}
