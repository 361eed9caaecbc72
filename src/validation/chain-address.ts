/**
 * Per-chain wallet address validation.
 *
 * Every check is syntactic/cryptographic only (format + checksum); no network
 * look-ups. All functions are total: they return false rather than throw for any
 * string, because decoder exceptions are caught and input sizes are bounded by a
 * cheap regex before any (quadratic) base58 decoding happens.
 */
import { base32nopad, base58, createBase58check } from '@scure/base'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'

export const CHAINS = [
  'ethereum',
  'solana',
  'polygon',
  'avalanche_c_chain',
  'base',
  'arbitrum',
  'optimism',
  'stellar',
  'tron',
] as const
export type Chain = (typeof CHAINS)[number]

const EVM_CHAINS: ReadonlySet<Chain> = new Set<Chain>([
  'ethereum',
  'polygon',
  'avalanche_c_chain',
  'base',
  'arbitrum',
  'optimism',
])

export function isChain(value: unknown): value is Chain {
  return typeof value === 'string' && (CHAINS as readonly string[]).includes(value)
}

// ---------------------------------------------------------------- EVM

const EVM_RE = /^0x[0-9a-fA-F]{40}$/
const HAS_LOWER_RE = /[a-f]/
const HAS_UPPER_RE = /[A-F]/

/** EIP-55: uppercase a hex letter iff the matching nibble of keccak256(lowercase hex) is >= 8. */
function eip55Checksum(hex40Lower: string): string {
  const hash = bytesToHex(keccak_256(utf8ToBytes(hex40Lower)))
  let out = ''
  for (let i = 0; i < hex40Lower.length; i++) {
    const c = hex40Lower.charAt(i)
    out += parseInt(hash.charAt(i), 16) >= 8 ? c.toUpperCase() : c
  }
  return out
}

function isValidEvmAddress(address: string): boolean {
  if (!EVM_RE.test(address)) return false
  const body = address.slice(2)
  // Single-case addresses carry no checksum information, so they are accepted as-is.
  if (!HAS_LOWER_RE.test(body) || !HAS_UPPER_RE.test(body)) return true
  return eip55Checksum(body.toLowerCase()) === body
}

// ---------------------------------------------------------------- Solana

// Bitcoin base58 alphabet (no 0, O, I, l); 32 bytes encode to 32..44 chars.
const SOLANA_RE = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/

function isValidSolanaAddress(address: string): boolean {
  if (!SOLANA_RE.test(address)) return false
  try {
    return base58.decode(address).length === 32
  } catch {
    return false
  }
}

// ---------------------------------------------------------------- Stellar

// StrKey: base32(version byte || 32-byte ed25519 key || crc16 LE) = 35 bytes = 56 chars.
const STELLAR_RE = /^G[A-Z2-7]{55}$/
const STELLAR_ACCOUNT_VERSION = 6 << 3 // "G..." public-key account id

/** CRC16-XModem (poly 0x1021, init 0), as used by Stellar StrKey. */
function crc16xmodem(bytes: Uint8Array): number {
  let crc = 0
  for (const b of bytes) {
    crc ^= b << 8
    for (let i = 0; i < 8; i++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    }
  }
  return crc
}

function isValidStellarAddress(address: string): boolean {
  if (!STELLAR_RE.test(address)) return false
  let raw: Uint8Array
  try {
    raw = base32nopad.decode(address)
  } catch {
    return false
  }
  if (raw.length !== 35 || raw[0] !== STELLAR_ACCOUNT_VERSION) return false
  const crc = crc16xmodem(raw.subarray(0, 33))
  return raw[33] === (crc & 0xff) && raw[34] === crc >> 8
}

// ---------------------------------------------------------------- Tron

// base58check(0x41 || 20-byte account) with a 4-byte double-SHA256 checksum.
const TRON_RE = /^T[1-9A-HJ-NP-Za-km-z]{33}$/
const TRON_VERSION = 0x41
const base58check = createBase58check(sha256)

function isValidTronAddress(address: string): boolean {
  if (!TRON_RE.test(address)) return false
  try {
    const payload = base58check.decode(address)
    return payload.length === 21 && payload[0] === TRON_VERSION
  } catch {
    return false
  }
}

// ---------------------------------------------------------------- public API

/** true when `address` is a well-formed address on `chain` */
export function isValidChainAddress(chain: Chain, address: string): boolean {
  if (typeof address !== 'string') return false
  if (EVM_CHAINS.has(chain)) return isValidEvmAddress(address)
  switch (chain) {
    case 'solana':
      return isValidSolanaAddress(address)
    case 'stellar':
      return isValidStellarAddress(address)
    case 'tron':
      return isValidTronAddress(address)
    default:
      return false
  }
}

/** canonical form used for uniqueness: EVM chains lowercased; all others unchanged */
export function addressKey(chain: Chain, address: string): string {
  // EVM addresses are case-insensitive (case only encodes the checksum); base58/base32 are case-sensitive.
  return EVM_CHAINS.has(chain) ? address.toLowerCase() : address
}

/** short human description of the expected format — used in 400 error messages */
export function describeAddressFormat(chain: Chain): string {
  if (EVM_CHAINS.has(chain)) {
    return 'an EVM address: 0x followed by 40 hex digits, with a valid EIP-55 checksum when mixed case'
  }
  switch (chain) {
    case 'solana':
      return 'a Solana address: 32 to 44 base58 characters encoding a 32-byte public key'
    case 'stellar':
      return 'a Stellar account address: 56 characters starting with G (base32 StrKey with a valid checksum)'
    case 'tron':
      return 'a Tron address: 34 base58check characters starting with T'
    default:
      return 'a valid address'
  }
}
