import fp from 'fastify-plugin'
import type { Db } from '../db/database.js'
import { AppsRepository } from '../db/repositories/apps.js'
import { DeliveriesRepository } from '../db/repositories/deliveries.js'
import { EventsRepository } from '../db/repositories/events.js'
import type { Transaction } from '../types.js'
import { requestTransactionScope, runUnitOfWork } from '../db/unit-of-work.js'
import type { DeliveryNotifier } from '../delivery/notifier.js'

/**
 * Attaches the database, the repositories and `transact`; closes the database when the app
 * closes. `transact` is the one way routes change data: the change and the events it emits
 * commit together, and the dispatchers (in this process and, on PostgreSQL, in others) hear
 * of it through the unit of work's signals once they have.
 */
export const databasePlugin = fp<{ db: Db; notifier: DeliveryNotifier }>(
  async (app, { db, notifier }) => {
    app.decorate('db', db)
    app.decorate('repos', { apps: new AppsRepository(db) })
    app.decorate('notifier', notifier)
    app.decorate(
      'transact',
      async <T>(work: (tx: Transaction) => Promise<T>): Promise<T> =>
        // Route work touches only the database, so a deadlock or serialization abort can run it again.
        runUnitOfWork(
          db,
          notifier,
          async (unit) => {
            const result = await work({
              db: unit.tx,
              unit,
              events: new EventsRepository(unit.tx, unit),
              deliveries: new DeliveriesRepository(unit.tx, unit),
            })
            // The request's own record of the change (Idempotency-Key), in the same commit.
            await requestTransactionScope.getStore()?.beforeCommit(unit.tx)
            return result
          },
          { retries: 3 },
        ),
    )
    app.addHook('onClose', async () => {
      await db.destroy()
    })
  },
  { name: 'database' },
)
