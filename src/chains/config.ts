import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { HDKey, type LocalAccount } from 'viem/accounts'
import { type DepositKeys, type KeySource, loadDepositKeys, loadHotWallet, SigningKeyError } from './keys.js'
import { parseAmount } from '../ledger/amount.js'
import { type Chain } from '../validation/chain-address.js'

/** The EVM chains the platform can watch itself (src/validation/chain-address.ts names them). */
export const EVM_CHAINS = ['ethereum', 'base', 'polygon', 'arbitrum', 'optimism', 'avalanche_c_chain'] as const satisfies readonly Chain[]
export type EvmChain = (typeof EVM_CHAINS)[number]

/** The tokens a chain may carry: the ledger's stablecoins. */
export const CHAIN_TOKENS = ['usdc', 'eurc'] as const
export type ChainToken = (typeof CHAIN_TOKENS)[number]

/** One chain the platform watches and receives on (CHAINS_FILE, docs/chains.md). */
export interface ChainConfig {
  chain: EvmChain
  /** what eth_chainId must answer; a node that answers another refuses the start */
  chainId: number
  /** tried in order; the watcher moves to the next on a fault and comes back later */
  rpcUrls: readonly string[]
  /** each accepted token's contract, lower-case */
  tokens: Readonly<Partial<Record<ChainToken, string>>>
  /** blocks on top of a deposit's, its own included, before it is credited */
  confirmations: number
  pollIntervalMs: number
  /** the most blocks one eth_getLogs asks for */
  maxBlockRange: number
  /** where the watcher starts reading the first time it runs; unset: the head at that moment */
  startBlock: number | undefined
  /** how long one RPC call may take before it counts as a fault */
  rpcTimeoutMs: number
  /** a head that has not moved for this long means the node lags: the next URL is tried; undefined: never (a chain with blocks only on demand) */
  maxHeadAgeMs?: number | undefined
  /** how long a sent payout may stay unmined before it is replaced (same nonce, higher fee); default PAYOUT_DEFAULTS' */
  payoutReplaceAfterMs?: number
  /** the highest fee per gas a payout may bid, in wei: a payout never pays more; default PAYOUT_DEFAULTS' */
  maxFeePerGasWei?: bigint
  /** a hot wallet holding less of the chain's coin than this is an alert; default PAYOUT_DEFAULTS' */
  minGasBalanceWei?: bigint
  /** the most of each token sent within spendingWindowSeconds without an operator's approval, in its smallest unit; none: no limit */
  spendingLimits?: Readonly<Partial<Record<ChainToken, bigint>>>
  /** the rolling window of spendingLimits; default PAYOUT_DEFAULTS' */
  spendingWindowSeconds?: number
  /** an address is swept once its confirmed deposits not swept yet reach this, per token, in its smallest unit; none: any amount */
  sweepMinimums?: Readonly<Partial<Record<ChainToken, bigint>>>
}

/** A chain's payout settings where its configuration gives none. */
export const PAYOUT_DEFAULTS = { replaceAfterMs: 120_000, maxFeePerGasWei: 500n * 1_000_000_000n, minGasBalanceWei: 10_000_000n * 1_000_000_000n, spendingWindowSeconds: 86_400 } as const



/** What CHAINS_FILE configures: the extended public key receiving addresses derive from, and each chain. */
export interface ChainsConfig {
  /** the file it was read from (for messages) */
  file: string
  /** the account-level extended public key (m/44'/60'/0'), see derivation.ts */
  receivingXpub: string
  chains: readonly ChainConfig[]
  /** the hot wallet's key source; undefined: live payouts are off (they wait, docs/chains.md#what-waits) */
  hotWalletKey?: KeySource | undefined
  /** the hot wallet, its key read from hotWalletKey at start (loadChainsConfig); it signs payouts and holds no key anyone can read */
  hotWallet?: LocalAccount | undefined
  /** the source of the xprv behind receivingXpub; undefined: deposits stay on their receiving addresses (nothing is swept) */
  receivingXprv?: KeySource | undefined
  /** the receiving addresses' keys, from receivingXprv at start (loadChainsConfig); the chains' senders sweep with them */
  depositKeys?: DepositKeys | undefined
}

export class ChainsConfigError extends Error {}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function integerField(object: { [key: string]: Json }, name: string, where: string, fallback: number | undefined, min: number, max: number): number {
  const value = object[name]
  if (value === undefined && fallback !== undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ChainsConfigError(`${where}.${name} must be an integer from ${min} to ${max}`)
  }
  return value
}

function knownKeys(object: { [key: string]: Json }, where: string, keys: readonly string[]): void {
  const unknown = Object.keys(object).filter((key) => !keys.includes(key))
  if (unknown.length > 0) throw new ChainsConfigError(`${where} has unknown field ${JSON.stringify(unknown[0])} (known: ${keys.join(', ')})`)
}

function rpcUrl(value: Json, where: string): string {
  if (typeof value === 'string') {
    try {
      const url = new URL(value)
      if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '') return value
    } catch {
      // refused below
    }
  }
  throw new ChainsConfigError(`${where} must be an http(s) URL`)
}

function chainConfig(chain: EvmChain, value: Json, where: string): ChainConfig {
  if (!isObject(value)) throw new ChainsConfigError(`${where} must be an object`)
  knownKeys(value, where, ['chainId', 'rpcUrls', 'tokens', 'confirmations', 'pollIntervalMs', 'maxBlockRange', 'startBlock', 'rpcTimeoutMs', 'maxHeadAgeMs', 'payoutReplaceAfterMs', 'maxFeePerGasGwei', 'minGasBalanceGwei', 'spendingLimits', 'spendingWindowSeconds', 'sweepMinimums'])
  const urls = value.rpcUrls
  if (!Array.isArray(urls) || urls.length === 0 || urls.length > 16) throw new ChainsConfigError(`${where}.rpcUrls must be a list of 1 to 16 http(s) URLs`)
  const tokens = value.tokens
  if (!isObject(tokens) || Object.keys(tokens).length === 0) throw new ChainsConfigError(`${where}.tokens must name at least one of ${CHAIN_TOKENS.join(', ')} with its contract address`)
  knownKeys(tokens, `${where}.tokens`, CHAIN_TOKENS)
  const contracts: Partial<Record<ChainToken, string>> = {}
  for (const token of CHAIN_TOKENS) {
    const contract = tokens[token]
    if (contract === undefined) continue
    if (typeof contract !== 'string' || !ADDRESS.test(contract)) throw new ChainsConfigError(`${where}.tokens.${token} must be a 0x-prefixed 20-byte hex address`)
    contracts[token] = contract.toLowerCase()
  }
  return {
    chain,
    chainId: integerField(value, 'chainId', where, undefined, 1, Number.MAX_SAFE_INTEGER),
    rpcUrls: urls.map((url, index) => rpcUrl(url, `${where}.rpcUrls[${index}]`)),
    tokens: contracts,
    confirmations: integerField(value, 'confirmations', where, undefined, 1, 10_000),
    pollIntervalMs: integerField(value, 'pollIntervalMs', where, 2_000, 50, 600_000),
    maxBlockRange: integerField(value, 'maxBlockRange', where, 500, 1, 100_000),
    startBlock: value.startBlock === undefined ? undefined : integerField(value, 'startBlock', where, undefined, 0, Number.MAX_SAFE_INTEGER),
    rpcTimeoutMs: integerField(value, 'rpcTimeoutMs', where, 5_000, 100, 120_000),
    // 0 turns it off: a local node that mines only on demand has a still head by design.
    maxHeadAgeMs: ((ms) => (ms === 0 ? undefined : ms))(integerField(value, 'maxHeadAgeMs', where, 60_000, 0, 86_400_000)),
    payoutReplaceAfterMs: integerField(value, 'payoutReplaceAfterMs', where, 120_000, 1_000, 86_400_000),
    maxFeePerGasWei: BigInt(integerField(value, 'maxFeePerGasGwei', where, 500, 1, 1_000_000)) * 1_000_000_000n,
    minGasBalanceWei: BigInt(integerField(value, 'minGasBalanceGwei', where, 10_000_000, 0, Number.MAX_SAFE_INTEGER)) * 1_000_000_000n,
    spendingLimits: spendingLimits(value.spendingLimits, `${where}.spendingLimits`),
    spendingWindowSeconds: integerField(value, 'spendingWindowSeconds', where, PAYOUT_DEFAULTS.spendingWindowSeconds, 60, 31_536_000),
    sweepMinimums: spendingLimits(value.sweepMinimums, `${where}.sweepMinimums`),
  }
}

/** `{"usdc": "10000.00"}`: each token's amount (a spending limit, a sweep minimum) as a decimal string of the token, in its smallest unit. */
function spendingLimits(value: Json | undefined, where: string): Partial<Record<ChainToken, bigint>> | undefined {
  if (value === undefined) return undefined
  if (!isObject(value)) throw new ChainsConfigError(`${where} must be an object of token → a decimal amount ("10000.00")`)
  knownKeys(value, where, CHAIN_TOKENS)
  const limits: Partial<Record<ChainToken, bigint>> = {}
  for (const token of CHAIN_TOKENS) {
    const text = value[token]
    if (text === undefined) continue
    let units: bigint | undefined
    try {
      units = typeof text === 'string' ? parseAmount(text, token) : undefined
    } catch {
      units = undefined
    }
    if (units === undefined || units < 0n) throw new ChainsConfigError(`${where}.${token} must be a decimal string of ${token} with at most 6 decimals ("10000.00")`)
    limits[token] = units
  }
  return limits
}

/** A key's source (the hot wallet's, the receiving xprv's): `{"file": PATH}` or `{"env": NAME}`, never the key itself. */
function keySource(value: Json | undefined, where: string): KeySource | undefined {
  if (value === undefined) return undefined
  const shape = `${where} must be {"file": PATH} or {"env": NAME}: the key itself never goes in this file`
  if (!isObject(value)) throw new ChainsConfigError(shape)
  const keys = Object.keys(value)
  if (keys.length !== 1) throw new ChainsConfigError(shape)
  const file = value.file
  const env = value.env
  if (typeof file === 'string' && file !== '') return { file: resolve(file) }
  if (typeof env === 'string' && /^[A-Z_][A-Z0-9_]*$/.test(env)) return { env }
  throw new ChainsConfigError(shape)
}

/** Whether `text` is an extended public key (xpub…, not an xprv: receiving reads no private key). */
function checkedXpub(text: Json | undefined, where: string): string {
  if (typeof text !== 'string') throw new ChainsConfigError(`${where}.receivingXpub must be an extended public key (xpub…)`)
  let key: HDKey
  try {
    key = HDKey.fromExtendedKey(text)
  } catch {
    throw new ChainsConfigError(`${where}.receivingXpub is not a valid extended public key`)
  }
  // Never echo it: an xprv put here by mistake is signing material.
  if (key.privateKey !== null) throw new ChainsConfigError(`${where}.receivingXpub is an extended private key: give the public one (xpub…); receiving needs no private key`)
  return text
}

/** Parses a chains file's text; `file` names it in messages. */
export function parseChainsConfig(text: string, file: string): ChainsConfig {
  let json: Json
  try {
    json = JSON.parse(text) as Json
  } catch {
    throw new ChainsConfigError(`${file} is not valid JSON`)
  }
  if (!isObject(json)) throw new ChainsConfigError(`${file} must hold a JSON object`)
  knownKeys(json, file, ['receivingXpub', 'chains', 'hotWalletKey', 'receivingXprv'])
  const chains = json.chains
  if (!isObject(chains)) throw new ChainsConfigError(`${file}.chains must be an object of chain name → its configuration`)
  const parsed: ChainConfig[] = []
  for (const [name, value] of Object.entries(chains)) {
    if (!(EVM_CHAINS as readonly string[]).includes(name)) throw new ChainsConfigError(`${file}.chains.${name} is not an EVM chain the platform knows (${EVM_CHAINS.join(', ')})`)
    parsed.push(chainConfig(name as EvmChain, value, `${file}.chains.${name}`))
  }
  if (json.receivingXprv !== undefined && json.hotWalletKey === undefined) throw new ChainsConfigError(`${file}.receivingXprv needs hotWalletKey: the hot wallet receives what is swept and pays its gas`)
  return {
    file,
    receivingXpub: checkedXpub(json.receivingXpub, file),
    chains: parsed,
    hotWalletKey: keySource(json.hotWalletKey, `${file}.hotWalletKey`),
    receivingXprv: keySource(json.receivingXprv, `${file}.receivingXprv`),
  }
}

/** CHAINS_FILE without its keys (what a command that signs nothing reads); unset: every chain is off. */
export function readChainsConfig(env: NodeJS.ProcessEnv): ChainsConfig | undefined {
  const name = env.CHAINS_FILE
  if (name === undefined || name === '') return undefined
  const file = resolve(name)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new ChainsConfigError(`CHAINS_FILE: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`)
  }
  return parseChainsConfig(text, 'CHAINS_FILE')
}

/** CHAINS_FILE: read at start (absolute or relative to the working directory), the hot wallet's key and the receiving xprv loaded; unset: every chain is off. */
export function loadChainsConfig(env: NodeJS.ProcessEnv): ChainsConfig | undefined {
  const config = readChainsConfig(env)
  if (config === undefined) return config
  try {
    const hotWallet = config.hotWalletKey === undefined ? undefined : loadHotWallet(config.hotWalletKey, env)
    const depositKeys = config.receivingXprv === undefined ? undefined : loadDepositKeys(config.receivingXprv, env, config.receivingXpub)
    return { ...config, hotWallet, depositKeys }
  } catch (error) {
    if (error instanceof SigningKeyError) throw new ChainsConfigError(`CHAINS_FILE: ${error.message}`)
    throw error
  }
}

/** The configuration of `chain`, or undefined when it is off. */
export function chainConfigOf(config: ChainsConfig | undefined, chain: string): ChainConfig | undefined {
  return config?.chains.find((candidate) => candidate.chain === chain)
}
