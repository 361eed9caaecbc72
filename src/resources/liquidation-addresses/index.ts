import { defineResource } from '../resource.js'
import { liquidationAddressesManifest } from './manifest.js'
import { liquidationAddressesMigrations } from './migrations.js'
import { type LiquidationAddressesOptions, liquidationAddressRoutes } from './routes.js'
import { LiquidationAddressSchema } from './schemas.js'
import { liquidationAddressesTables } from './tables.js'

export const liquidationAddresses = defineResource({
  manifest: liquidationAddressesManifest,
  tables: liquidationAddressesTables,
  migrations: liquidationAddressesMigrations,
  configure: ({ receiving }): LiquidationAddressesOptions => ({ receiving }),
  routes: liquidationAddressRoutes,
  events: { 'liquidation_address.created': LiquidationAddressSchema },
})
