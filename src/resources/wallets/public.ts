import type { Db } from '../../db/database.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { type Holding, type WalletCurrency, type WalletRow, WalletsRepository } from './repository.js'

/*
 * What other modules may use of wallets (the only file of this folder they import): the chains
 * and currencies a wallet holds, its ledger account, the example wallets of the document, and
 * the reads and the first-use provisioning of an application's wallets.
 */

export { newWalletAddress, TOKEN_CONTRACTS, WALLET_CHAINS, WALLET_CURRENCIES, walletAccountKey, type Holding, type WalletChain, type WalletCurrency, type WalletRow } from './repository.js'
export { walletsOf } from './provision.js'
export { contractOf } from './objects.js'
export { BASE_WALLET_EXAMPLE, stablecoinAmount, WALLET_EXAMPLES } from './schemas.js'

/** The application's wallets in the environment, one per chain, made on first use: `db` must be a write transaction's where the backend needs one (SQLite). */
export function ensureWallets(db: Db, environment: LedgerEnvironment, appId: string): Promise<WalletRow[]> {
  return new WalletsRepository(db).ensure(environment, appId)
}

/** One of the application's wallets, or undefined (another application's or another environment's wallet is undefined). */
export function findWallet(db: Db, environment: LedgerEnvironment, appId: string, walletId: string): Promise<WalletRow | undefined> {
  return new WalletsRepository(db).find(environment, appId, walletId)
}

/** The application's wallets in the environment as they are (none made): what a form offers to choose from. */
export function listWallets(db: Db, environment: LedgerEnvironment, appId: string): Promise<WalletRow[]> {
  return new WalletsRepository(db).list(environment, appId)
}

/** What each of `wallets` (all of one application and environment) holds in each of `currencies`, wallet by wallet, from the ledger's stored sums. */
export function holdingsOf(db: Db, wallets: readonly WalletRow[], currencies: readonly WalletCurrency[]): Promise<Holding[]> {
  return new WalletsRepository(db).holdings(wallets, currencies)
}
