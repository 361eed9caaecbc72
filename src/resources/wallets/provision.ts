import type { FastifyInstance } from 'fastify'
import { isoOf } from '../../db/time.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import type { LiveReceiving } from '../../ledger/money-context.js'
import { WALLET_CHAINS, type WalletRow, WalletsRepository } from './repository.js'

/** Another process gave the wallet its address first: this transaction's allocation is rolled back. */
class AddressGivenElsewhere extends Error {}

/** A live wallet without an address whose chain is on: it is given its receiving address on this read. */
function awaitsAddress(wallet: WalletRow, receiving: LiveReceiving): boolean {
  return wallet.environment === 'live' && wallet.address === null && receiving.offReason(wallet.chain, undefined) === undefined
}

/**
 * The application's wallets in the environment, made on their first use, each live one on a chain
 * that is on with its receiving address (docs/chains.md#wallets). A read answers once that is so;
 * only the first use (or one racing it, or the first after a chain is turned on) opens a write
 * transaction. The address is allocated and given in one transaction: one that loses the race to
 * another process rolls back, giving its derivation index back, and reads the winner's.
 */
export async function walletsOf(app: FastifyInstance, environment: LedgerEnvironment, appId: string, receiving: LiveReceiving): Promise<WalletRow[]> {
  const existing = await new WalletsRepository(app.db).list(environment, appId)
  if (existing.length === WALLET_CHAINS.length && !existing.some((wallet) => awaitsAddress(wallet, receiving))) return existing
  try {
    return await app.transact(async (tx) => {
      const repository = new WalletsRepository(tx.db)
      const wallets = await repository.ensure(environment, appId)
      const waiting = wallets.filter((wallet) => awaitsAddress(wallet, receiving))
      if (waiting.length === 0) return wallets
      const now = Date.now()
      for (const wallet of waiting) {
        const address = await receiving.allocate(tx.db, wallet.chain, { appId, ownerType: 'wallet', ownerId: wallet.id, currency: undefined }, now)
        if (!(await repository.giveAddress(wallet.id, address, isoOf(now)))) throw new AddressGivenElsewhere()
      }
      return repository.list(environment, appId)
    })
  } catch (error) {
    if (!(error instanceof AddressGivenElsewhere)) throw error
    return new WalletsRepository(app.db).list(environment, appId)
  }
}
