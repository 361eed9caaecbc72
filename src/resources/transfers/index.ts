import { defineResource } from '../resource.js'
import { creditTransfer } from './chain-deposits.js'
import { followTransferPayout } from './chain-payouts.js'
import { transfersManifest } from './manifest.js'
import { transfersMigrations } from './migrations.js'
import { transferRoutes, type TransferRoutesOptions } from './routes.js'
import { TransferSchema } from './schemas.js'
import { transfersTables } from './tables.js'

export const transfers = defineResource({
  manifest: transfersManifest,
  configure: ({ config, exchangeRates, publicUrl, receiving, payouts }): TransferRoutesOptions => ({ exchangeRates, drainTimings: config.drains, publicUrl, receiving, payouts }),
  tables: transfersTables,
  migrations: transfersMigrations,
  routes: transferRoutes,
  subscriptions: { 'chain.deposit_confirmed': creditTransfer, 'chain.payout_updated': followTransferPayout },
  events: { 'transfer.created': TransferSchema, 'transfer.updated': TransferSchema },
})
