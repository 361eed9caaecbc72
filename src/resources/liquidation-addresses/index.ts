import type { Resource } from '../resource.js'
import { liquidationAddressesManifest } from './manifest.js'
import { liquidationAddressRoutes } from './routes.js'
import { LiquidationAddressSchema } from './schemas.js'

export const liquidationAddresses: Resource = {
  manifest: liquidationAddressesManifest,
  routes: liquidationAddressRoutes,
  events: { 'liquidation_address.created': LiquidationAddressSchema },
}
