import type { ChainPayoutUpdated } from '../../events/domain-events.js'
import type { Transaction } from '../../events/transact.js'
import { followLivePayout } from './lifecycle.js'

/** A live drain's payout, or its refund, on chain moved: the drain moves with it (followLivePayout). */
export async function followDrainPayout(tx: Transaction, event: ChainPayoutUpdated): Promise<void> {
  if (event.ownerType !== 'drain' && event.ownerType !== 'drain_refund') return
  await followLivePayout(tx, event)
}
