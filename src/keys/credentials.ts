import { hash, randomBytes, timingSafeEqual } from 'node:crypto'

// Key material, digests and limits: what a key is, not HTTP authentication, so the apps repository
// (which issues keys) and the auth hook (which checks them) both import it from here.

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
  return hash('sha256', secret, 'hex')
}

const NO_DIGEST = '0'.repeat(64)

/**
 * Constant-time check of a presented secret against a stored digest. With no stored digest
 * (unknown key) it still hashes and compares, so both failures cost the same. The digests are
 * compared as their hex text, hashed by the one-shot `hash`: the check takes 0.96 µs where
 * `createHash(...).digest()` and decoding the stored hex took 2.26 µs (the check was 8.8 % of an
 * authenticated read's server CPU, bench:profile of GET /webhooks/{id}).
 */
export function secretMatches(presented: string, storedDigestHex: string | undefined): boolean {
  const presentedDigest = Buffer.from(digestSecret(presented), 'latin1')
  const stored = Buffer.from(storedDigestHex ?? NO_DIGEST, 'latin1')
  if (stored.length !== presentedDigest.length) return false
  return timingSafeEqual(presentedDigest, stored) && storedDigestHex !== undefined
}
