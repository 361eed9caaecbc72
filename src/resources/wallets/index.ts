import { defineResource } from '../resource.js'
import { walletsManifest } from './manifest.js'
import { walletsMigrations } from './migrations.js'
import { walletRoutes, type WalletRoutesOptions } from './routes.js'
import { creditWallet } from './chain-deposits.js'
import { walletsTables } from './tables.js'

export const wallets = defineResource({
  manifest: walletsManifest,
  tables: walletsTables,
  migrations: walletsMigrations,
  configure: ({ receiving }): WalletRoutesOptions => ({ receiving }),
  routes: walletRoutes,
  subscriptions: { 'chain.deposit_confirmed': creditWallet },
})
