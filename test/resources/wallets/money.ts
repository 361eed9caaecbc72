import type { Db } from '../../../src/db/database.js'
import { writeTransaction } from '../../../src/db/database.js'
import { newId } from '../../../src/db/time.js'
import { parseAmount } from '../../../src/ledger/amount.js'
import { type LedgerEnvironment, LedgerRepository } from '../../../src/ledger/ledger.js'
import { walletAccountKey, type WalletCurrency, type WalletRow, WalletsRepository } from '../../../src/resources/wallets/repository.js'

/**
 * Real money in a wallet before drains exist: entries written through the ledger in a write
 * transaction, as a drain would, between the wallet's account and the outside world's.
 */

/** The wallet of `walletId` as stored, for the ledger's key. */
export async function storedWallet(db: Db, environment: LedgerEnvironment, appId: string, walletId: string): Promise<WalletRow> {
  const wallet = await new WalletsRepository(db).find(environment, appId, walletId)
  if (wallet === undefined) throw new Error(`no wallet ${walletId} of ${appId} in ${environment}`)
  return wallet
}

/** Moves `amount` (decimal text) between the wallet and the world: posted at once, or pending. */
async function move(db: Db, wallet: WalletRow, currency: WalletCurrency, amount: string, direction: 'in' | 'out', status: 'posted' | 'pending'): Promise<string> {
  const environment = wallet.environment as LedgerEnvironment
  return writeTransaction(db, async (tx) => {
    const ledger = new LedgerRepository(tx)
    const world = await ledger.account({ environment, appId: '', kind: 'world', currency, reference: wallet.chain })
    const account = await ledger.account(walletAccountKey(wallet, currency))
    const units = parseAmount(amount, currency)
    const [from, to] = direction === 'in' ? [world, account] : [account, world]
    return ledger.record({
      environment,
      appId: wallet.app_id,
      reasonType: 'test',
      reasonId: newId(),
      status,
      postings: [
        { accountId: from, direction: 'debit', amount: units },
        { accountId: to, direction: 'credit', amount: units },
      ],
    })
  })
}

/** Money arriving in the wallet: posted (available at once) or pending (on its way in). */
export function deposit(db: Db, wallet: WalletRow, currency: WalletCurrency, amount: string, status: 'posted' | 'pending' = 'posted'): Promise<string> {
  return move(db, wallet, currency, amount, 'in', status)
}

/** Money leaving the wallet: posted (gone) or pending (reserved). */
export function withdraw(db: Db, wallet: WalletRow, currency: WalletCurrency, amount: string, status: 'posted' | 'pending' = 'posted'): Promise<string> {
  return move(db, wallet, currency, amount, 'out', status)
}
