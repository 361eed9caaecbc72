import fp from 'fastify-plugin'
import type { Db } from '../db/database.js'
import { AppsRepository } from '../apps/repository.js'
import { type DomainEventSink, transactOn } from '../events/transact.js'
import type { DeliveryNotifier } from '../delivery/notifier.js'

/**
 * Attaches the database, the repositories and `transact`; closes the database when the app
 * closes. `transact` is the one way routes change data: the change and the events it emits
 * commit together, and the dispatchers (in this process and, on PostgreSQL, in others) hear
 * of it through the unit of work's signals once they have. `hooks`: the subscribers of the
 * domain events a change publishes.
 */
export const databasePlugin = fp<{ db: Db; notifier: DeliveryNotifier; hooks: DomainEventSink }>(
  async (app, { db, notifier, hooks }) => {
    app.decorate('db', db)
    app.decorate('repos', { apps: new AppsRepository(db) })
    app.decorate('notifier', notifier)
    app.decorate('transact', transactOn(db, notifier, hooks))
    app.addHook('onClose', async () => {
      await db.destroy()
    })
  },
  { name: 'database' },
)
