import fp from 'fastify-plugin'
import { type Db, writeTransaction } from '../db/database.js'
import { AppsRepository } from '../db/repositories/apps.js'
import { CustomersRepository } from '../db/repositories/customers.js'
import { EventsRepository } from '../db/repositories/events.js'
import { LiquidationAddressesRepository } from '../db/repositories/liquidation-addresses.js'
import { TaxesRepository } from '../db/repositories/taxes.js'
import { WebhooksRepository } from '../db/repositories/webhooks.js'
import type { Repositories, TransactionRepositories } from '../types.js'
import type { DeliveryNotifier } from '../webhooks/notifier.js'

export function repositoriesOf(db: Db): Repositories {
  return {
    apps: new AppsRepository(db),
    webhooks: new WebhooksRepository(db),
    customers: new CustomersRepository(db),
    liquidationAddresses: new LiquidationAddressesRepository(db),
    taxes: new TaxesRepository(db),
  }
}

/**
 * Attaches the database, the repositories and `transact`; closes the database when the app
 * closes. `transact` is the one way routes change data: the change and the events it emits
 * commit together, and the dispatcher is woken once they have.
 */
export const databasePlugin = fp<{ db: Db; notifier: DeliveryNotifier }>(
  async (app, { db, notifier }) => {
    app.decorate('db', db)
    app.decorate('repos', repositoriesOf(db))
    app.decorate('notifier', notifier)
    app.decorate('transact', async <T>(work: (tx: TransactionRepositories) => Promise<T>): Promise<T> => {
      let events: EventsRepository | undefined
      const result = await writeTransaction(db, async (trx) => {
        events = new EventsRepository(trx)
        return work({ ...repositoriesOf(trx), events })
      })
      if (events !== undefined && events.deliveriesWritten > 0) notifier.deliveriesCommitted()
      return result
    })
    app.addHook('onClose', async () => {
      await db.destroy()
    })
  },
  { name: 'database' },
)
