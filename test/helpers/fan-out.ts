import type { Db } from '../../src/db/database.js'
import { EventsRepository, type FanOutResult } from '../../src/events/events-repository.js'
import { runUnitOfWork, type SignalSink } from '../../src/db/unit-of-work.js'

/** A sink that tells no dispatcher: the tests that drive the fan-out by hand read its rows instead. */
export const quiet: SignalSink = { signalStatements: () => undefined, committed: () => undefined }

/** One deferred fan-out transaction (EventsRepository.fanOutPending), after the application `after`. */
export function fanOut(db: Db, after?: string): Promise<FanOutResult> {
  return runUnitOfWork(db, quiet, (unit) => new EventsRepository(unit.tx, unit).fanOutPending(after))
}

/** Deferred fan-out transactions until no event waits. */
export async function fanOutAll(db: Db): Promise<void> {
  let after: string | undefined
  for (let i = 0; i < 1000; i++) {
    const result = await fanOut(db, after)
    after = result.lastAppId ?? after
    if (!result.more && result.events === 0) return
  }
  throw new Error('fan-out did not finish')
}
