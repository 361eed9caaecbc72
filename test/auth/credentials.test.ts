// vitest: sqlite project only — pure functions, no backend.
import { describe, expect, it } from 'vitest'
import { digestSecret, generateKeyPair, secretMatches } from '../../src/keys/credentials.js'

describe('secret digests', () => {
  it('stores SHA-256 as lowercase hex (the FIPS 180-2 "abc" vector)', () => {
    expect(digestSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('matches the secret a pair was generated with, and nothing one character off', () => {
    const pair = generateKeyPair('production')
    expect(secretMatches(pair.clientSecret, pair.secretDigest)).toBe(true)
    expect(secretMatches(`${pair.clientSecret}x`, pair.secretDigest)).toBe(false)
    expect(secretMatches(pair.clientSecret.slice(0, -1), pair.secretDigest)).toBe(false)
    expect(secretMatches('', pair.secretDigest)).toBe(false)
  })

  it('never matches an unknown key, not even the secret whose digest is all zeros would be', () => {
    expect(secretMatches('anything', undefined)).toBe(false)
  })

  it('rejects a stored digest of the wrong length instead of comparing a prefix', () => {
    const digest = digestSecret('secret')
    expect(secretMatches('secret', digest.slice(0, 63))).toBe(false)
    expect(secretMatches('secret', `${digest}0`)).toBe(false)
  })
})
