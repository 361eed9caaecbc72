import { defineResource } from '../resource.js'
import { walletsManifest } from './manifest.js'
import { walletsMigrations } from './migrations.js'
import { walletRoutes } from './routes.js'
import { walletsTables } from './tables.js'

export const wallets = defineResource({
  manifest: walletsManifest,
  tables: walletsTables,
  migrations: walletsMigrations,
  routes: walletRoutes,
})
