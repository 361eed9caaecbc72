import { NotFound } from '../../errors.js'
import type { ChainDepositConfirmed } from '../../events/domain-events.js'
import type { HookSettings } from '../../events/hooks.js'
import type { Transaction } from '../../events/transact.js'
import { LedgerRepository } from '../../ledger/ledger.js'
import { hotShardOf } from '../../ledger/simulated-rails.js'
import { walletAccountKey, WalletsRepository } from './repository.js'

/**
 * A live deposit to a wallet's receiving address, confirmed on chain: one posted entry from the
 * chain's inflow to the wallet's account in the token's currency, so it is available at once. A
 * wallet takes every token of its chain, so nothing here refuses one.
 */
export async function creditWallet(tx: Transaction, event: ChainDepositConfirmed, settings: HookSettings): Promise<void> {
  if (event.ownerType !== 'wallet') return
  const wallet = await new WalletsRepository(tx.db).find(event.environment, event.appId, event.ownerId)
  if (wallet === undefined) throw new NotFound('Wallet not found')
  const ledger = new LedgerRepository(tx.db)
  const [inflow, holding] = (await ledger.accounts([
    { environment: event.environment, appId: event.appId, kind: 'world', currency: event.currency, reference: `chain:${event.chain}#${hotShardOf(event.depositId, settings.money.hotAccountShards)}` },
    walletAccountKey(wallet, event.currency),
  ])) as [string, string]
  await ledger.record({
    environment: event.environment,
    appId: event.appId,
    reasonType: 'deposit',
    reasonId: event.depositId,
    status: 'posted',
    postings: [
      { accountId: inflow, direction: 'debit', amount: event.amount },
      { accountId: holding, direction: 'credit', amount: event.amount },
    ],
  })
  event.credited = { type: 'wallet', id: wallet.id }
}
