import { readFileSync, statSync } from 'node:fs'
import { HDKey, type LocalAccount, privateKeyToAccount } from 'viem/accounts'
import { MAX_DERIVATION_INDEX } from './derivation.js'

/**
 * Signing keys, read once at start from where the chains file says (docs/chains.md#keys). The key
 * lives only in the viem account's closure: never in the database, a log line, an answer, an
 * event or an error message (the messages here name the source, never its content).
 */

export class SigningKeyError extends Error {}

/**
 * Where the hot wallet's private key is read from at start (never from the chains file itself): a
 * file only its owner may read, or an environment variable. The key pays gas and sends payouts.
 */
export type KeySource = { file: string } | { env: string }

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/

/** The text of the key source: a file nobody but its owner may read, or an environment variable. */
function keyText(source: KeySource, env: NodeJS.ProcessEnv, what: string): string {
  if ('env' in source) {
    const text = env[source.env]
    if (text === undefined || text === '') throw new SigningKeyError(`${what}: the environment variable ${source.env} is not set`)
    return text.trim()
  }
  let mode: number
  try {
    mode = statSync(source.file).mode
  } catch {
    throw new SigningKeyError(`${what}: cannot read ${source.file}`)
  }
  // As ssh does with a private key: one others can read is refused, not used.
  if ((mode & 0o077) !== 0) throw new SigningKeyError(`${what}: ${source.file} may be read by others (mode ${(mode & 0o777).toString(8)}); make it 600 (chmod 600 ${source.file})`)
  try {
    return readFileSync(source.file, 'utf8').trim()
  } catch {
    throw new SigningKeyError(`${what}: cannot read ${source.file}`)
  }
}

/** The hot wallet: pays gas and sends payouts. Refused when the source is missing, readable by others, or not one 32-byte hex key. */
export function loadHotWallet(source: KeySource, env: NodeJS.ProcessEnv): LocalAccount {
  const text = keyText(source, env, 'hotWalletKey')
  if (!PRIVATE_KEY.test(text)) throw new SigningKeyError(`hotWalletKey: ${'env' in source ? `$${source.env}` : source.file} must hold one private key: 0x and 64 hex digits`)
  return privateKeyToAccount(text as `0x${string}`)
}

/**
 * The receiving addresses' keys, derived on demand from the operator's account-level extended
 * private key (m/44'/60'/0'), which stays in this closure: the sweep asks an address's key to sign
 * a permit and nothing else (sweep.ts). Holds no property a log or JSON.stringify could show.
 */
export interface DepositKeys {
  /** the account of receiving index `index` (m/44'/60'/0'/0/index) */
  accountAt(index: number): LocalAccount
}

/**
 * The xprv behind `receivingXpub`, read from `source` like the hot wallet's key. Refused when it is
 * not an extended private key, or when its public key is not `receivingXpub` (another seed, or
 * another account or depth): the sweep would sign for addresses that are not the platform's.
 */
export function loadDepositKeys(source: KeySource, env: NodeJS.ProcessEnv, receivingXpub: string): DepositKeys {
  const where = 'env' in source ? `$${source.env}` : source.file
  const text = keyText(source, env, 'receivingXprv')
  let root: HDKey
  try {
    root = HDKey.fromExtendedKey(text)
  } catch {
    // The parser's message can quote its input.
    throw new SigningKeyError(`receivingXprv: ${where} must hold one extended private key (xprv…)`)
  }
  if (root.privateKey === null) throw new SigningKeyError(`receivingXprv: ${where} holds an extended public key; the sweep needs the private one (xprv…) behind receivingXpub`)
  if (root.publicExtendedKey !== receivingXpub) throw new SigningKeyError(`receivingXprv: ${where} is not the extended private key of receivingXpub (their public keys differ): give the xprv at m/44'/60'/0' of the seed receivingXpub was exported from`)
  const external = root.deriveChild(0)
  return {
    accountAt(index: number): LocalAccount {
      if (!Number.isSafeInteger(index) || index < 0 || index > MAX_DERIVATION_INDEX) throw new RangeError(`derivation index out of range: ${index}`)
      const privateKey = external.deriveChild(index).privateKey
      if (privateKey === null) throw new Error('the extended key holds no private key')
      return privateKeyToAccount(`0x${Buffer.from(privateKey).toString('hex')}`)
    },
  }
}
