import { randomBytes } from 'node:crypto'
import { base58 } from '@scure/base'
import type { Selectable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { WalletsTable } from './tables.js'
import { newId, nowIso } from '../../db/time.js'
import type { Currency } from '../../ledger/amount.js'
import type { AccountKey, LedgerEnvironment } from '../../ledger/ledger.js'

/**
 * An application's wallets: one per environment and chain, made on first use, each holding every
 * currency of WALLET_CURRENCIES. What a wallet holds is the ledger's: a `wallet` account per
 * currency whose reference is the wallet's id, made when money first arrives. Reading one that was
 * never made is a zero balance, so a read never writes an account.
 */

/** The chains of Bridge's custodial wallets; USDC and EURC are both issued natively on each. */
export const WALLET_CHAINS = ['base', 'ethereum', 'solana'] as const
export type WalletChain = (typeof WALLET_CHAINS)[number]

export const WALLET_CURRENCIES = ['usdc', 'eurc'] as const
export type WalletCurrency = (typeof WALLET_CURRENCIES)[number]

/** Circle's token contracts (Solana: the mints), shown beside each balance. */
export const TOKEN_CONTRACTS: Readonly<Record<WalletChain, Readonly<Record<WalletCurrency, string>>>> = {
  base: { usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', eurc: '0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42' },
  ethereum: { usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', eurc: '0x1aBaEA1f7C830bD89Acc67eC4af516284b1bC33c' },
  solana: { usdc: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', eurc: 'HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr' },
}

export type WalletRow = Selectable<WalletsTable>

/** What one wallet holds in one currency, from its ledger account's stored sums (zero without one). */
export interface Holding {
  wallet: WalletRow
  currency: WalletCurrency
  /** credits posted − debits posted − debits pending: what may be spent now */
  available: bigint
  /** credits of pending entries: on the way in, not yet available */
  pendingIncoming: bigint
  /** debits of pending entries: reserved, already taken out of `available` */
  pendingOutgoing: bigint
}

/**
 * A new address, valid for the chain (src/validation/chain-address.ts): an EVM one is 20 random
 * bytes in lower-case hex (single case carries no checksum, and every EVM tool takes it), a
 * Solana one 32 random bytes in base58. 160 and 256 random bits: two wallets never share one.
 */
export function newWalletAddress(chain: WalletChain): string {
  return chain === 'solana' ? base58.encode(randomBytes(32)) : `0x${randomBytes(20).toString('hex')}`
}

/** The ledger account key of a wallet's holdings in one currency: kind 'wallet', reference = the wallet's id. */
export function walletAccountKey(wallet: WalletRow, currency: Currency): AccountKey {
  return { environment: wallet.environment as LedgerEnvironment, appId: wallet.app_id, kind: 'wallet', currency, reference: wallet.id }
}

const chainOrder = (row: WalletRow) => WALLET_CHAINS.indexOf(row.chain as WalletChain)

export class WalletsRepository {
  constructor(private readonly db: Db) {}

  /** The application's wallets in the environment that exist, in WALLET_CHAINS order; never writes. */
  async list(environment: LedgerEnvironment, appId: string): Promise<WalletRow[]> {
    const rows = await this.db.selectFrom('wallets').selectAll().where('environment', '=', environment).where('app_id', '=', appId).execute()
    return rows.sort((a, b) => chainOrder(a) - chainOrder(b))
  }

  /**
   * The application's wallets in the environment, one per chain of WALLET_CHAINS, made on first
   * use: a sandbox wallet with a made-up address, a live one with none (giveAddress gives it its
   * receiving address once its chain is on). Idempotent under concurrency on both backends: the missing ones are inserted with
   * `on conflict do nothing` (the unique (environment, app_id, chain)), then all are read, so
   * every caller gets the same wallets. Writes, so `db` must be a write transaction where the
   * backend needs one (SQLite).
   */
  async ensure(environment: LedgerEnvironment, appId: string): Promise<WalletRow[]> {
    const existing = await this.list(environment, appId)
    const missing = WALLET_CHAINS.filter((chain) => !existing.some((row) => row.chain === chain))
    if (missing.length === 0) return existing
    const now = nowIso()
    await this.db
      .insertInto('wallets')
      .values(missing.map((chain) => ({ id: newId(), environment, app_id: appId, chain, address: environment === 'sandbox' ? newWalletAddress(chain) : null, created_at: now, updated_at: now })))
      .onConflict((conflict) => conflict.doNothing())
      .execute()
    return this.list(environment, appId)
  }

  /** Gives a live wallet without an address its receiving address; false when it already has one (another process gave it first). */
  async giveAddress(walletId: string, address: string, now: string): Promise<boolean> {
    const result = await this.db.updateTable('wallets').set({ address, updated_at: now }).where('id', '=', walletId).where('address', 'is', null).executeTakeFirst()
    return result.numUpdatedRows === 1n
  }

  /** One of the application's wallets, or undefined (another application's or another environment's wallet is undefined). */
  find(environment: LedgerEnvironment, appId: string, walletId: string): Promise<WalletRow | undefined> {
    return this.db
      .selectFrom('wallets')
      .selectAll()
      .where('environment', '=', environment)
      .where('app_id', '=', appId)
      .where('id', '=', walletId.toLowerCase())
      .executeTakeFirst()
  }

  /**
   * What each of `wallets` (all of one application and environment) holds in each of
   * `currencies`, wallet by wallet in the order given, currencies in the order given: one read of
   * the accounts' stored sums, in constant time per account. An account never made is zero.
   */
  async holdings(wallets: readonly WalletRow[], currencies: readonly WalletCurrency[]): Promise<Holding[]> {
    const first = wallets[0]
    if (first === undefined || currencies.length === 0) return []
    const accounts = await this.db
      .selectFrom('ledger_accounts')
      .select(['reference', 'currency', 'available', 'credits_pending', 'debits_pending'])
      .where('environment', '=', first.environment)
      .where('app_id', '=', first.app_id)
      .where('kind', '=', 'wallet')
      .where('currency', 'in', [...currencies])
      .where('reference', 'in', wallets.map((wallet) => wallet.id))
      .execute()
    const byKey = new Map(accounts.map((account) => [`${account.reference} ${account.currency}`, account]))
    return wallets.flatMap((wallet) =>
      currencies.map((currency): Holding => {
        const account = byKey.get(`${wallet.id} ${currency}`)
        return {
          wallet,
          currency,
          available: BigInt(account?.available ?? 0),
          pendingIncoming: BigInt(account?.credits_pending ?? 0),
          pendingOutgoing: BigInt(account?.debits_pending ?? 0),
        }
      }),
    )
  }
}
