import { Conflict, InvalidRequest, NotFound } from '../../errors.js'
import type { ChainDepositConfirmed } from '../../events/domain-events.js'
import type { HookSettings } from '../../events/hooks.js'
import type { Transaction } from '../../events/transact.js'
import { formatAmount } from '../../ledger/amount.js'
import { findApplicationLiquidationAddress } from '../liquidation-addresses/public.js'
import { receiveDeposit } from './lifecycle.js'

/**
 * A live deposit to a liquidation address's receiving address, confirmed on chain: the same
 * intake as the sandbox's simulated deposits (receiveDeposit), with the chain's transaction hash
 * and sender. Refused (the deposit is held) for a token the address does not take, and for an
 * address that is not active.
 */
export async function creditLiquidationAddress(tx: Transaction, event: ChainDepositConfirmed, settings: HookSettings): Promise<void> {
  if (event.ownerType !== 'liquidation_address') return
  const address = await findApplicationLiquidationAddress(tx.db, event.appId, event.ownerId)
  if (address === undefined) throw new NotFound('Liquidation address not found')
  if (address.currency !== event.currency) throw new InvalidRequest(`a ${event.currency} deposit to a liquidation address that takes ${address.currency}`)
  if (address.state !== 'active') throw new Conflict(`a deposit to a liquidation address that is ${address.state}`)
  const drain = await receiveDeposit(tx, settings.money, {
    environment: event.environment,
    appId: event.appId,
    customerId: address.customer_id,
    liquidationAddressId: address.id,
    amount: formatAmount(event.amount, event.currency),
    depositTxHash: event.txHash,
    fromAddress: event.fromAddress,
  })
  event.credited = { type: 'drain', id: drain.id }
}
