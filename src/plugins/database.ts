import fp from 'fastify-plugin'
import type { Db } from '../db/database.js'
import { AppsRepository } from '../db/repositories/apps.js'
import { CustomersRepository } from '../db/repositories/customers.js'
import { LiquidationAddressesRepository } from '../db/repositories/liquidation-addresses.js'
import { TaxesRepository } from '../db/repositories/taxes.js'
import { WebhooksRepository } from '../db/repositories/webhooks.js'
import type { Repositories } from '../types.js'

/** Attaches the database and the repositories; closes the database when the app closes. */
export const databasePlugin = fp<{ db: Db }>(
  async (app, { db }) => {
    const repos: Repositories = {
      apps: new AppsRepository(db),
      webhooks: new WebhooksRepository(db),
      customers: new CustomersRepository(db),
      liquidationAddresses: new LiquidationAddressesRepository(db),
      taxes: new TaxesRepository(db),
    }
    app.decorate('db', db)
    app.decorate('repos', repos)
    app.addHook('onClose', async () => {
      await db.destroy()
    })
  },
  { name: 'database' },
)
