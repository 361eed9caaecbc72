import type { Db } from '../db/database.js'
import type { UnitOfWork } from '../db/unit-of-work.js'
import { DeliveriesRepository } from './deliveries-repository.js'
import type { DomainEvent } from './domain-events.js'
import { EventsRepository } from './events-repository.js'
import { requestTransactionScope, runUnitOfWork, type SignalSink } from '../db/unit-of-work.js'

/** One write transaction: its database handle and unit of work (for a resource's repositories), the outbox and the delivery queue. */
export interface Transaction {
  /** the transaction: every statement of the change runs on it */
  db: Db
  /** the commit's side effects (a webhook stopped, deliveries written) */
  unit: UnitOfWork
  events: EventsRepository
  deliveries: DeliveriesRepository
  /**
   * Tells the modules that subscribe to `event.type` (src/events/hooks.ts): their handlers run on
   * this transaction before it resolves, and an error of theirs is the change's.
   */
  publish(event: DomainEvent): Promise<void>
}

/** Where a transaction's domain events go: their subscribers (DomainHooks, built from RESOURCES by domainHooks). */
export interface DomainEventSink {
  publish(tx: Transaction, event: DomainEvent): Promise<void>
}

/** Runs `work` in one write transaction: the change and the events it emits commit together. */
export type Transact = <T>(work: (tx: Transaction) => Promise<T>) => Promise<T>

/**
 * The one way anything changes data, for a route (`app.transact`), the drain scheduler and the
 * CLI alike: the change, its events and their deliveries (and what `hooks`' subscribers of its
 * domain events change) commit together, and the dispatchers hear of it through the unit of
 * work's signals once they have. The work touches only the database, so a deadlock or
 * serialization abort can run it again.
 */
export function transactOn(db: Db, sink: SignalSink, hooks: DomainEventSink): Transact {
  return <T>(work: (tx: Transaction) => Promise<T>): Promise<T> =>
    runUnitOfWork(
      db,
      sink,
      async (unit) => {
        const tx: Transaction = { db: unit.tx, unit, events: new EventsRepository(unit.tx, unit), deliveries: new DeliveriesRepository(unit.tx, unit), publish: (event) => hooks.publish(tx, event) }
        const result = await work(tx)
        // A request's own record of the change (Idempotency-Key), in the same commit.
        await requestTransactionScope.getStore()?.beforeCommit(unit.tx)
        return result
      },
      { retries: 3 },
    )
}
