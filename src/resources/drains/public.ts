import type { Db } from '../../db/database.js'
import type { Recent } from '../../db/newest-first-page.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { type DrainRow, DrainsRepository } from './repository.js'

/*
 * What other modules may use of drains (the only file of this folder they import): the timing of
 * a money step, which transfers share with drains (the same scheduler runs both);
 * the console's reads of an application's drains.
 */

export { type DrainRow } from './repository.js'
export { DRAIN_STATES } from './schemas.js'
export { type DrainContext, type DrainTimings, RATE_RETRY_MS, stepDelayMs } from './lifecycle.js'

/** The console's reads: the application's newest drains in the environment, and one of them. */
export function recentDrains(db: Db, environment: LedgerEnvironment, appId: string, recent: Recent): Promise<DrainRow[]> {
  return new DrainsRepository(db).recent(environment, appId, recent)
}

export function findDrain(db: Db, environment: LedgerEnvironment, appId: string, id: string): Promise<DrainRow | undefined> {
  return new DrainsRepository(db).findOfApp(environment, appId, id)
}

/*
 * An operator's tools for a drain whose funds are held in clearing (src/resources/held/ calls them):
 * which are held, and retry, refund and release, each in the caller's transaction.
 */
export { HELD_DRAIN_STATES, type HeldDrainOutcome, heldDrains, refundHeldDrain, releaseHeldDrain, retryHeldDrain } from './lifecycle.js'
