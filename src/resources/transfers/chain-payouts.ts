import type { ChainPayoutUpdated } from '../../events/domain-events.js'
import type { HookSettings } from '../../events/hooks.js'
import type { Transaction } from '../../events/transact.js'
import { followLivePayout } from './lifecycle.js'

/** A live transfer's or payment intent's payout on chain moved: it moves with it (followLivePayout). */
export async function followTransferPayout(tx: Transaction, event: ChainPayoutUpdated, settings: HookSettings): Promise<void> {
  if (event.ownerType !== 'transfer') return
  await followLivePayout(tx, settings.money, event)
}
