import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

export type Environment = 'production' | 'development'
export const ENVIRONMENTS: readonly Environment[] = ['production', 'development']

/** Requests per rolling hour, per key, by environment (the contract's numbers). */
export const HOURLY_LIMIT: Record<Environment, number> = { production: 1000, development: 100 }

/** A key's hourly limit: the operator's override, else its environment's. */
export function hourlyLimitOf(key: { environment: Environment; rate_limit_override: number | null }): number {
  return key.rate_limit_override ?? HOURLY_LIMIT[key.environment]
}

export interface GeneratedKeyPair {
  clientKey: string
  clientSecret: string
  secretDigest: string
}

// 24 random bytes = 192 bits; base64url keeps the token copy-pasteable. The pk_/sk_ + live/test
// prefixes let secret scanners recognise the pair and tell production from development.
function token(prefix: string): string {
  return `${prefix}${randomBytes(24).toString('base64url')}`
}

export function generateKeyPair(environment: Environment): GeneratedKeyPair {
  const mode = environment === 'production' ? 'live' : 'test'
  const clientSecret = token(`sk_${mode}_`)
  return { clientKey: token(`pk_${mode}_`), clientSecret, secretDigest: digestSecret(clientSecret) }
}

/** SHA-256 hex of a secret: the only form in which secrets are stored. */
export function digestSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex')
}

const NO_DIGEST = Buffer.alloc(32)

/**
 * Constant-time check of a presented secret against a stored digest. With no stored digest
 * (unknown key) it still hashes and compares, so both failures cost the same.
 */
export function secretMatches(presented: string, storedDigestHex: string | undefined): boolean {
  const presentedDigest = createHash('sha256').update(presented, 'utf8').digest()
  const stored = storedDigestHex === undefined ? NO_DIGEST : Buffer.from(storedDigestHex, 'hex')
  if (stored.length !== 32) return false
  return timingSafeEqual(presentedDigest, stored) && storedDigestHex !== undefined
}
