import { defineResource } from '../resource.js'
import { receivingAddressesManifest } from './manifest.js'
import { receivingAddressesMigrations } from './migrations.js'
import { type ReceivingAddressesOptions, receivingAddressRoutes } from './routes.js'
import { receivingAddressesTables } from './tables.js'

export const receivingAddresses = defineResource({
  manifest: receivingAddressesManifest,
  tables: receivingAddressesTables,
  migrations: receivingAddressesMigrations,
  configure: ({ receiving }): ReceivingAddressesOptions => ({ receiving }),
  routes: receivingAddressRoutes,
})
