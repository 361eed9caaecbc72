import { InvalidRequest, NotFound } from '../../errors.js'
import type { ChainDepositConfirmed } from '../../events/domain-events.js'
import type { HookSettings } from '../../events/hooks.js'
import type { Transaction } from '../../events/transact.js'
import { familyOf, receiveFunds } from './lifecycle.js'
import { TransfersRepository } from './repository.js'

/**
 * A live deposit to a payment intent's or direct-wallet transfer's receiving address, confirmed on
 * chain: its funds arrive as the sandbox's simulate_funds makes them (receiveFunds), so an amount
 * other than the one awaited, or a second payment once the first arrived, is refused and the
 * deposit held, as the sandbox refuses them.
 */
export async function creditTransfer(tx: Transaction, event: ChainDepositConfirmed, settings: HookSettings): Promise<void> {
  if (event.ownerType !== 'transfer') return
  const transfers = new TransfersRepository(tx.db)
  const row = (await transfers.find(event.environment, event.appId, 'payment_intent', event.ownerId)) ?? (await transfers.find(event.environment, event.appId, 'transfer', event.ownerId))
  if (row === undefined) throw new NotFound('Transfer not found')
  if (row.currency !== event.currency) throw new InvalidRequest(`a ${event.currency} deposit to an address awaiting ${row.currency}`)
  const family = familyOf(row.kind)
  await receiveFunds(tx, settings.money, family, event.environment, event.appId, row.id, event.amount)
  event.credited = { type: family, id: row.id }
}
